import { expect, test } from '@playwright/test';
import { checkPage, ownerApi, ownerJson, signIn, watchForErrors } from './support/dashboard.js';
import { system } from './support/system.js';

/**
 * The payouts pages exist for an owner whose ID token has the `agent` role (the demo owner,
 * whose platform the demo gave balances and four statements) and not for an owner without it.
 */
interface Statement {
  statement_id: string;
  status: string;
  transfer: { transfer_reference: string; status: string } | null;
}
interface StatementPage {
  items: Statement[];
  total: number;
}
interface Overview {
  balances: { currency: string; pending_micros: number; available_micros: number; locked_micros: number; paid_out_micros: number }[];
  readiness: { setup_status: string };
  recent_statements: Statement[];
}

/** An amount in micros as the page writes it: exact decimals from the integer, at least two. */
function money(micros: number, currency: string): string {
  const digits = BigInt(micros).toString().padStart(7, '0');
  const whole = digits.slice(0, -6).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = digits.slice(-6).replace(/0+$/, '').padEnd(2, '0');
  return `${currency} ${whole}.${fraction}`;
}

test('an owner with the agent role has the payouts pages: balances, readiness, statements with paging and a status filter, a statement with its transfer', async ({ page }, testInfo) => {
  const { owner } = system();
  const errors = watchForErrors(page);
  await signIn(page, owner, '#/payouts');
  await expect(page.getByRole('heading', { level: 1, name: 'Payouts' })).toBeVisible();

  // Balances: the four buckets of each currency, as the API has them.
  const overview = await ownerJson<Overview>(owner, '/agent-payouts/me/overview');
  expect(overview.balances.length).toBeGreaterThan(0);
  for (const balance of overview.balances) {
    const cells = page.locator(`tr[data-currency="${balance.currency}"] td`);
    await expect(cells.nth(0)).toHaveText(money(balance.pending_micros, balance.currency));
    await expect(cells.nth(1)).toHaveText(money(balance.available_micros, balance.currency));
    await expect(cells.nth(2)).toHaveText(money(balance.locked_micros, balance.currency));
    await expect(cells.nth(3)).toHaveText(money(balance.paid_out_micros, balance.currency));
  }
  await expect(page.getByTestId('readiness')).toContainText('Recipient setup: Complete');
  // SPEC's two distinctions, said on the page.
  await expect(page.locator('[data-note="available-not-sent"]')).toContainText('Available ≠ sent.');
  await expect(page.locator('[data-note="reporting-not-balances"]')).toContainText('Reporting earnings ≠ payout balances.');
  await checkPage(page, testInfo, 'payouts-overview');

  // Statements: the API's page, then only the PAID ones.
  const subnav = page.getByRole('navigation', { name: 'Payouts' });
  await subnav.getByRole('link', { name: 'Statements' }).click();
  const all = await ownerJson<StatementPage>(owner, '/agent-payouts/me/statements?page=1&page_size=20');
  expect(all.items.map((s) => s.status).sort()).toEqual(['FAILED', 'LOCKED', 'PAID', 'PAID']);
  const rows = page.getByTestId('statements').locator('tbody tr');
  await expect(rows).toHaveCount(all.items.length);
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-statement-id')))).toEqual(all.items.map((s) => s.statement_id));
  const pager = page.getByRole('navigation', { name: 'Pages' });
  await expect(pager).toContainText(`Page 1 of 1 (${all.total} statements)`);
  await expect(pager.getByRole('link')).toHaveCount(0);
  await checkPage(page, testInfo, 'payouts-statements');
  // Past the last page (a bookmark, say): no rows, and a way back.
  await page.goto(page.url().replace(/#.*$/, '#/payouts/statements?page=2'));
  await expect(pager).toContainText(`Page 2 of 1 (${all.total} statements)`);
  await expect(rows).toHaveCount((await ownerJson<StatementPage>(owner, '/agent-payouts/me/statements?page=2&page_size=20')).items.length);
  await pager.getByRole('link', { name: 'Previous page' }).click();
  await expect(page).toHaveURL(/#\/payouts\/statements\?page=1$/);
  await expect(rows).toHaveCount(all.items.length);

  await page.getByRole('combobox', { name: 'Status' }).selectOption('PAID');
  await expect(page).toHaveURL(/#\/payouts\/statements\?page=1&status=PAID$/);
  const paid = await ownerJson<StatementPage>(owner, '/agent-payouts/me/statements?page=1&page_size=20&status=PAID');
  await expect(rows).toHaveCount(paid.items.length);
  expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-statement-id')))).toEqual(paid.items.map((s) => s.statement_id));
  for (const status of await rows.locator('.badge').allTextContents()) expect(status).toBe('PAID');

  // A statement with its transfer.
  const chosen = paid.items[0]!;
  await rows.first().getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`#/payouts/statements/${chosen.statement_id}$`));
  await expect(page.getByTestId('statement')).toHaveAttribute('data-statement-id', chosen.statement_id);
  await expect(page.getByTestId('transfer')).toContainText(chosen.transfer!.transfer_reference);
  await expect(page.getByTestId('transfer')).toContainText(chosen.transfer!.status);
  await checkPage(page, testInfo, 'payouts-statement');

  // History.
  await subnav.getByRole('link', { name: 'History' }).click();
  const history = await ownerJson<StatementPage>(owner, '/agent-payouts/me/history?page=1&page_size=20');
  await expect(page.getByTestId('statements').locator('tbody tr')).toHaveCount(history.items.length);
  await checkPage(page, testInfo, 'payouts-history');
  expect(errors).toEqual([]);
});

test('an owner without the agent role has no payouts pages (and the API refuses them too)', async ({ page }, testInfo) => {
  const { viewer } = system();
  const errors = watchForErrors(page);
  await signIn(page, viewer, '#/keys');
  await expect(page.getByTestId('signed-in-as')).toHaveText('Viewer without a role');
  const nav = page.getByRole('navigation', { name: 'Dashboard' });
  await expect(nav.getByRole('link', { name: 'API keys' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Payouts' })).toHaveCount(0);
  // Their platform has no keys yet.
  await expect(page.getByText('No API keys yet. Create one above.')).toBeVisible();

  await page.goto(page.url().replace(/#.*$/, '#/payouts'));
  await expect(page.getByRole('heading', { level: 1, name: 'Not found' })).toBeVisible();
  await expect(page.getByText('Payouts need an account with the agent role; yours has none.')).toBeVisible();
  await checkPage(page, testInfo, 'payouts-without-role');
  // The gateway's answer to a token without the role (the page never asks).
  const refused = await ownerApi(viewer, '/agent-payouts/me/overview');
  expect(refused.status).toBe(401);
  expect(JSON.parse(refused.text).detail).toBe('The ID token does not carry the agent role; sign in with an account that has the agent role.');
  expect(errors).toEqual([]);
});
