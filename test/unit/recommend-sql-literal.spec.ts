import 'reflect-metadata';
import fc from 'fast-check';
import pg from 'pg';
import { quoteLiteral } from '#libs/database';

/** The answer's statement quotes its values itself (a simple-protocol message has no parameters): exactly as pg's escapeLiteral. */
describe('quoteLiteral', () => {
  it('writes what pg.escapeLiteral writes, for any text', () => {
    const tricky = fc.constantFrom("'", "''", '\\', "\\'", "O'Brien \\ back", 'E\'x\'', '$$', '"', '😀', '\u202e', ' ');
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), tricky), { maxLength: 6 }), (parts) => {
        const text = parts.join('');
        expect(quoteLiteral(text)).toBe(pg.escapeLiteral(text));
      }),
      { numRuns: 5000 },
    );
    expect(quoteLiteral("it's \\ fine")).toBe(" E'it''s \\\\ fine'");
    expect(quoteLiteral('{"a":"b"}')).toBe('\'{"a":"b"}\'');
  });
});
