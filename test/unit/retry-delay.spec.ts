import { retryDelayMs } from '#libs/nats';

describe('retryDelayMs', () => {
  it('doubles from the base and stays within [half, full] of the step', () => {
    for (let deliveries = 1; deliveries <= 6; deliveries++) {
      const step = Math.min(30000, 500 * 2 ** (deliveries - 1));
      expect(retryDelayMs(deliveries, 500, 30000, () => 0)).toBe(step / 2);
      expect(retryDelayMs(deliveries, 500, 30000, () => 1)).toBe(step);
    }
  });

  it('is capped at the maximum', () => {
    expect(retryDelayMs(40, 500, 30000, () => 1)).toBe(30000);
  });
});
