/**
 * Money arrives as integer micros (one million per major unit, SPEC "Payout resources"). It is
 * formatted with BigInt and string arithmetic only: a float never touches an amount, so
 * 9007199254740991 micros reads 9,007,199,254.740991 and 0.1 + 0.2 never appears.
 */
const MICROS_PER_UNIT = 1_000_000n;
const FRACTION_DIGITS = 6;

/** An integer amount of micros from the API (a safe-integer number), a BigInt or a decimal string. */
export type Micros = number | bigint | string;

export function toMicros(value: Micros): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`micros must be a safe integer, got ${value}`);
    return BigInt(value);
  }
  if (typeof value === 'string' && /^-?\d{1,30}$/.test(value)) return BigInt(value);
  throw new RangeError(`micros must be an integer, got ${JSON.stringify(value)}`);
}

/** "1234567" → "1,234,567" (en-US grouping, the dashboard's one number format). */
export function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * The exact decimal of an amount of micros: grouped thousands, at least `minFractionDigits`
 * decimals (2 by default), more only when the amount has them (up to 6), never rounded.
 * 1500000 → "1.50", 1234567 → "1.234567", -5 → "-0.000005".
 */
export function formatMicros(value: Micros, minFractionDigits = 2): string {
  const micros = toMicros(value);
  const negative = micros < 0n;
  const magnitude = negative ? -micros : micros;
  const whole = groupThousands((magnitude / MICROS_PER_UNIT).toString());
  let fraction = (magnitude % MICROS_PER_UNIT).toString().padStart(FRACTION_DIGITS, '0').replace(/0+$/, '');
  if (fraction.length < minFractionDigits) fraction = fraction.padEnd(minFractionDigits, '0');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** An amount with its ISO 4217 currency code: "USD 1,234.50", "EUR -0.75". */
export function formatMoney(value: Micros, currency: string): string {
  return `${currency} ${formatMicros(value)}`;
}

/** A count (exposures, clicks, …): grouped, exact. */
export function formatCount(value: number | bigint): string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError(`count must be a safe integer, got ${value}`);
  const text = value.toString();
  return text.startsWith('-') ? `-${groupThousands(text.slice(1))}` : groupThousands(text);
}

/**
 * Micros as a float of major units, for chart geometry only (pixels tolerate rounding; every
 * number a person reads comes from formatMicros).
 */
export function microsToChartUnits(value: Micros): number {
  const micros = toMicros(value);
  return Number(micros / MICROS_PER_UNIT) + Number(micros % MICROS_PER_UNIT) / 1_000_000;
}
