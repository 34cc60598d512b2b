/** SPEC's two distinctions, said where the numbers are. */
export function EarningsAreNotBalancesNote() {
  return (
    <p className="note" data-note="reporting-not-balances">
      <strong>Reporting earnings ≠ payout balances.</strong> Reporting earnings are performance earnings and can include unsettled
      amounts; they are not a withdrawable balance or a payout statement. Payout balances follow the earnings ledger and settlement,
      so the two can differ at any moment.
    </p>
  );
}

export function AvailableIsNotSentNote() {
  return (
    <p className="note" data-note="available-not-sent">
      <strong>Available ≠ sent.</strong> Available earnings are settled and can be considered for a payout; they do not mean a transfer
      has been sent. A payout needs completed recipient setup, the minimum payout amount and monthly approval; money has moved only
      when a statement is PAID.
    </p>
  );
}
