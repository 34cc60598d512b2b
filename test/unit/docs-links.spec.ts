import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README is the page a newcomer reads first: it fits on a screen (≤ 200 lines), and every
 * relative link in it and in docs/ leads somewhere: the file exists and, for `file.md#anchor`,
 * the heading does (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens,
 * repeated headings numbered).
 */
const ROOT = process.cwd();

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = githubSlug(heading.replace(/`/g, ''));
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** Every relative link of a Markdown file: [text](target), ![alt](target) and [text]: target. */
function relativeLinks(file: string): string[] {
  const text = prose(readFileSync(file, 'utf8'));
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

describe('README and docs', () => {
  it('the README fits on a screen: at most 200 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))('every relative link of %s resolves', (_name, file) => {
    const broken: string[] = [];
    for (const link of relativeLinks(file)) {
      const [path, anchor] = link.split('#', 2) as [string, string | undefined];
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchorsOf(target).has(decodeURIComponent(anchor).toLowerCase())) broken.push(`${link}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it('speak of the product, not of the work items that built it: no "issue N"', () => {
    const mentions = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bissues? \d+/i.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim().slice(0, 100)}`] : [])),
    );
    expect(mentions).toEqual([]);
  });

  it('GitHub anchors: lower case, punctuation dropped, spaces to hyphens', () => {
    expect(githubSlug('Run it: two commands')).toBe('run-it-two-commands');
    expect(githubSlug('POST /agent/recommend and tracking URLs')).toBe('post-agentrecommend-and-tracking-urls');
    expect(githubSlug('Ingest — npm run bench:ingest (target ≥ 25,000 events/s)')).toBe('ingest--npm-run-benchingest-target--25000-eventss');
  });
});
