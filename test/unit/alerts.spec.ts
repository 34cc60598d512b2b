import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';

/**
 * deploy/prometheus/alerts.yaml: parses as a Prometheus rule file, every rule is complete
 * (name, expression, severity, summary, a runbook link to a section of docs/operations.md that
 * exists), and every metric an expression reads is registered somewhere in apps/ or libs/ (with
 * the histogram series suffixes for histograms), or is Prometheus' own `up`.
 */

const root = process.cwd();

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'node_modules' ? [] : sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Metrics registered through libs/observability's counter(), gauge() and histogram(). */
function registeredMetrics(): Map<string, 'counter' | 'gauge' | 'histogram'> {
  const metrics = new Map<string, 'counter' | 'gauge' | 'histogram'>();
  for (const file of [...sourceFiles(join(root, 'apps')), ...sourceFiles(join(root, 'libs'))]) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\b(counter|gauge|histogram)(?:<[^>]*>)?\(\s*'(\w+)'/g)) {
      metrics.set(match[2], match[1] as 'counter' | 'gauge' | 'histogram');
    }
  }
  return metrics;
}

/** Metric names read by a PromQL expression: identifiers followed by a selector or a range, or starting with weave_. */
function metricsIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  const withoutMatchers = withoutStrings.replace(/\{[^}]*\}/g, '{}');
  const names = new Set<string>();
  for (const match of withoutMatchers.matchAll(/\b([a-zA-Z_:][\w:]*)\s*(?=\{|\[)/g)) names.add(match[1]);
  for (const match of withoutMatchers.matchAll(/\b(weave_\w+)/g)) names.add(match[1]);
  return [...names];
}

function anchors(markdown: string): Set<string> {
  return new Set(
    markdown
      .split('\n')
      .filter((line) => /^#{1,6}\s/.test(line))
      .map((line) => line.replace(/^#+\s+/, '').trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')),
  );
}

const file = YAML.parse(readFileSync(join(root, 'deploy/prometheus/alerts.yaml'), 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
const rules = file.groups.flatMap((group) => group.rules);
const registered = registeredMetrics();

describe('deploy/prometheus/alerts.yaml', () => {
  it('is a rule file of named groups with alerting rules', () => {
    expect(file.groups.length).toBeGreaterThan(0);
    for (const group of file.groups) {
      expect(group.name).toMatch(/^\S+$/);
      expect(group.rules.length).toBeGreaterThan(0);
    }
    const names = rules.map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
  });

  it('finds the metrics of the code (the registry scan is not empty)', () => {
    for (const name of ['weave_dead_letters_total', 'weave_consumer_pending_messages', 'weave_report_age_seconds', 'weave_publication_failures_total', 'weave_http_request_duration_seconds']) {
      expect(registered.has(name)).toBe(true);
    }
  });

  it.each(rules.map((r) => [r.alert ?? r.record, r] as const))('%s is complete and links to its runbook section', (_name, rule) => {
    expect(rule.alert).toMatch(/^Weave[A-Za-z]+$/);
    expect(rule.expr.trim().length).toBeGreaterThan(0);
    expect(['warning', 'critical']).toContain(rule.labels?.severity);
    expect(rule.annotations?.summary).toBeTruthy();
    if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    // Balanced brackets: a cheap guard against a broken expression.
    for (const [open, close] of [['(', ')'], ['{', '}'], ['[', ']']]) {
      expect(rule.expr.split(open).length).toBe(rule.expr.split(close).length);
    }
    const [path, anchor] = rule.annotations!.runbook_url.split('#');
    expect(path).toBe('docs/operations.md');
    expect(anchor).toBe(rule.alert!.toLowerCase());
    expect(anchors(readFileSync(join(root, path), 'utf8')).has(anchor)).toBe(true);
  });

  it.each(rules.map((r) => [r.alert, r.expr] as const))('%s reads only metrics that the services register', (_name, expr) => {
    const metrics = metricsIn(expr);
    expect(metrics.length).toBeGreaterThan(0);
    for (const metric of metrics) {
      if (metric === 'up') continue;
      const histogramBase = metric.replace(/_(bucket|count|sum)$/, '');
      const known = registered.has(metric) || (metric !== histogramBase && registered.get(histogramBase) === 'histogram');
      expect({ metric, registered: known }).toEqual({ metric, registered: true });
      // Buckets only exist for histograms.
      if (metric.endsWith('_bucket')) expect(registered.get(histogramBase)).toBe('histogram');
    }
  });

  it('the metric check is not vacuous', () => {
    expect(metricsIn('sum(rate(weave_not_a_metric_total{a="b"}[5m])) / rate(other_metric[1m])')).toEqual(['weave_not_a_metric_total', 'other_metric']);
    expect(registered.has('weave_not_a_metric_total')).toBe(false);
  });
});
