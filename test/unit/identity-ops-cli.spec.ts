import { UsageError, parseOpsCommand } from '../../apps/ops/src/cli.js';

describe('ops CLI argument parsing', () => {
  it('parses every command of DESIGN §3', () => {
    expect(parseOpsCommand(['platform', 'create', '--agent-id', 'a1'])).toEqual({ kind: 'platform.create', agentId: 'a1' });
    expect(parseOpsCommand(['platform', 'create', '--agent-id', 'a1', '--owner-uid', 'u1'])).toEqual({ kind: 'platform.create', agentId: 'a1', ownerUid: 'u1' });
    expect(parseOpsCommand(['platform', 'suspend', '--agent-id=a1'])).toEqual({ kind: 'platform.status', agentId: 'a1', status: 'suspended' });
    expect(parseOpsCommand(['platform', 'activate', '--agent-id', 'a1'])).toEqual({ kind: 'platform.status', agentId: 'a1', status: 'active' });
    expect(parseOpsCommand(['key', 'create', '--agent-id', 'a1', '--mode', 'test'])).toEqual({ kind: 'key.create', agentId: 'a1', mode: 'test' });
    expect(parseOpsCommand(['key', 'revoke', '--key-id', 'key_1'])).toEqual({ kind: 'key.revoke', keyId: 'key_1' });
    expect(parseOpsCommand(['key', 'audit', '--agent-id', 'a1'])).toEqual({ kind: 'key.audit', agentId: 'a1' });
  });

  it.each([
    [[]],
    [['platform']],
    [['platform', 'delete', '--agent-id', 'a']],
    [['platform', 'create']],
    [['platform', 'create', '--agent-id', '']],
    [['platform', 'create', '--agent-id', 'a', '--agent-id', 'b']],
    [['platform', 'suspend', '--agent-id', 'a', '--owner-uid', 'u']],
    [['key', 'create', '--agent-id', 'a']],
    [['key', 'create', '--agent-id', 'a', '--mode', 'prod']],
    [['key', 'revoke']],
    [['key', 'revoke', '--key-id', 'k', '--unknown', 'x']],
    [['key', 'revoke', '--key-id', 'k', 'extra']],
    [['key', 'audit']],
    [['key', 'audit', '--agent-id', 'a', '--mode', 'live']],
  ])('%j is a usage error', (argv) => {
    expect(() => parseOpsCommand(argv)).toThrow(UsageError);
  });
});
