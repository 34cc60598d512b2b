import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn, ValidateBy } from 'class-validator';
import { IsPresent, shownValue } from '#libs/contracts';
import { KEY_MODES, KEY_NAME_MAX_LENGTH, keyNameProblem, type KeyMode } from '#libs/identity';

/** Unrevoked keys a platform may have (DESIGN §7); creating one more answers 409. */
export const MAX_ACTIVE_KEYS = 20;

const HINT = 'Send {"mode": "live" | "test", "name": "<1–64 characters>"}.';
const TIMESTAMP = { type: 'string', format: 'date-time' } as const;
const KEY_ID = { type: 'string', pattern: '^key_[0-9A-Za-z]{20}$', description: 'Identifier of the key (not secret).', example: 'key_3NqK8vT1xWb5YdR2mZ7c' } as const;
const MODE = {
  type: 'string',
  enum: KEY_MODES,
  description: 'live keys (sk_live_…) report and recommend for live traffic, test keys (sk_test_…) for test traffic.',
  example: 'live',
} as const;

/** A key name as the repository accepts it (the one rule of #libs/identity), reported with its reason. */
function IsKeyName(): PropertyDecorator {
  return ValidateBy({
    name: 'isKeyName',
    validator: {
      validate: (value: unknown) => keyNameProblem(value) === undefined,
      defaultMessage: (args) => `${keyNameProblem(args?.value) ?? 'name is not valid'}.`,
    },
  });
}

/** The body of POST /agent/keys: exactly `{mode, name}`. */
@ApiSchema({ name: 'CreateApiKeyRequest', description: 'The mode and a name for the new key; any other field is refused with 422.' })
export class CreateKeyRequestDto {
  @ApiProperty(MODE)
  // Checked in this order; the first failure is the reason.
  @applyDecorators(
    IsPresent(HINT),
    IsIn(KEY_MODES, { message: ({ value }) => `Unsupported mode ${shownValue(value)}: live or test.` }),
  )
  mode: KeyMode;

  @ApiProperty({
    type: 'string',
    minLength: 1,
    maxLength: KEY_NAME_MAX_LENGTH,
    description:
      'A name that tells the owner what the key is for: 1–64 characters (Unicode code points), not blank, without control characters, line breaks or bidirectional overrides.',
    example: 'Production chat backend',
  })
  @applyDecorators(IsPresent(HINT), IsKeyName())
  name: string;
}

/** One key of GET /agent/keys: never its secret or hash. */
@ApiSchema({ name: 'ApiKey', description: 'An API key of the platform as its owner sees it: never the secret.' })
export class KeyDto {
  @ApiProperty(KEY_ID)
  key_id: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'The name given at creation; null for keys made by operations (ops CLI).', example: 'Production chat backend' })
  name: string | null;

  @ApiProperty(MODE)
  mode: KeyMode;

  @ApiProperty({
    type: 'string',
    nullable: true,
    pattern: '^[0-9A-Za-z]{4}$',
    description: 'The last four characters of the secret, to tell keys apart. null only for a key made before key management existed, until its next use.',
    example: 'x9Qa',
  })
  last4: string | null;

  @ApiProperty({ ...TIMESTAMP, description: 'When the key was created.', example: '2026-11-20T09:12:44.120Z' })
  created_at: string;

  @ApiProperty({
    ...TIMESTAMP,
    nullable: true,
    description: 'Within a minute of the latest successful request made with the key (uses are recorded in batches); null when never used.',
    example: '2026-11-25T10:03:00.412Z',
  })
  last_used_at: string | null;

  @ApiProperty({ ...TIMESTAMP, nullable: true, description: 'When the key was revoked (it is then refused with 401); null while it works.', example: null })
  revoked_at: string | null;
}

/** The key list example of the document. */
export const KEY_LIST_EXAMPLE: { items: KeyDto[] } = {
  items: [
    {
      key_id: 'key_3NqK8vT1xWb5YdR2mZ7c',
      name: 'Production chat backend',
      mode: 'live',
      last4: 'x9Qa',
      created_at: '2026-11-20T09:12:44.120Z',
      last_used_at: '2026-11-25T10:03:00.412Z',
      revoked_at: null,
    },
    { key_id: 'key_8ZbT2cVw5QeR1nYu4KpL', name: null, mode: 'test', last4: 'Lm07', created_at: '2026-10-02T15:40:03.001Z', last_used_at: null, revoked_at: '2026-11-01T08:00:12.733Z' },
  ],
};

@ApiSchema({ name: 'ApiKeyList', description: 'Every key of the platform, newest first, revoked keys included.' })
export class KeyListDto {
  @ApiProperty({ type: [KeyDto], description: 'Newest first.' })
  items: KeyDto[];
}

/** POST /agent/keys → 201: the only answer that ever holds the secret. */
@ApiSchema({ name: 'CreatedApiKey', description: 'The new key with its secret: shown this once, never again (only a hash is stored). It works at once.' })
export class CreatedKeyDto {
  @ApiProperty(KEY_ID)
  key_id: string;

  @ApiProperty({
    type: 'string',
    pattern: '^sk_(live|test)_[0-9A-Za-z]{32,128}$',
    description: 'The secret API key, to send as "Authorization: Bearer <API_KEY>" from a backend. Store it now: it cannot be shown again.',
    example: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc9Qm2Xv8KLs0PbN5x9Qa',
  })
  api_key: string;

  @ApiProperty({ type: 'string', description: 'The name given.', example: 'Production chat backend' })
  name: string;

  @ApiProperty(MODE)
  mode: KeyMode;

  @ApiProperty({ ...TIMESTAMP, description: 'When the key was created.', example: '2026-11-25T10:05:31.904Z' })
  created_at: string;
}
