/**
 * A generated catalog of any size, for bench:recommend and the relevance set: a dozen product
 * categories, and words spread the way real catalogs spread them (a few words in most ads, most
 * words in few):
 *
 * - COMMON_WORDS ("premium", "new", …): in most ads, whatever their category;
 * - each category's CORE words ("espresso", "grinder", …): in most ads of that category;
 * - each category's TAIL words (made-up brand and model names, one category each): drawn with
 *   a Zipf-like law (rank r with probability ∝ 1/r), so the first few are in thousands of ads
 *   and most are in a handful.
 *
 * Ad `i` depends only on (seed, i): any range of a catalog can be generated on its own, and two
 * runs build the same catalog. Tail words end in z or x, which no English word the questions use
 * does, so questions about other subjects find nothing.
 *
 *   node dist/bench/catalog-generator.js questions > test/relevance/labelled-questions.json
 */
import type { CatalogAd } from '#libs/catalog';
import { prng } from '../test/support/prng.js';

export const COMMON_WORDS = ['premium', 'quality', 'new', 'best', 'classic', 'durable', 'lightweight', 'everyday', 'comfort', 'design', 'value', 'modern'];

export const CATEGORIES: Record<string, string[]> = {
  running: ['running', 'shoes', 'trail', 'marathon', 'sneakers', 'jogging', 'cushioned', 'trainers'],
  coffee: ['coffee', 'espresso', 'grinder', 'beans', 'roast', 'brewer', 'barista', 'latte'],
  camping: ['camping', 'tent', 'sleeping', 'backpack', 'hiking', 'lantern', 'outdoor', 'stove'],
  audio: ['headphones', 'speaker', 'wireless', 'bluetooth', 'earbuds', 'audio', 'noise', 'bass'],
  kitchen: ['cookware', 'skillet', 'knife', 'pan', 'oven', 'kitchen', 'blender', 'pot'],
  fitness: ['yoga', 'dumbbell', 'fitness', 'gym', 'workout', 'mat', 'kettlebell', 'resistance'],
  gaming: ['gaming', 'console', 'controller', 'keyboard', 'mouse', 'monitor', 'headset', 'esports'],
  skincare: ['skincare', 'moisturizer', 'serum', 'sunscreen', 'cleanser', 'lotion', 'cream', 'acne'],
  baby: ['baby', 'stroller', 'diaper', 'crib', 'toddler', 'infant', 'pacifier', 'nursery'],
  garden: ['garden', 'lawn', 'mower', 'seeds', 'planter', 'hose', 'fertilizer', 'pruner'],
  travel: ['luggage', 'suitcase', 'travel', 'duffel', 'packing', 'passport', 'airport', 'trolley'],
  books: ['novel', 'ebook', 'paperback', 'fiction', 'audiobook', 'bookshelf', 'thriller', 'bestseller'],
};
export const CATEGORY_NAMES = Object.keys(CATEGORIES);

/** Made-up words per category. */
export const TAIL_WORDS_PER_CATEGORY = 5000;

/** Words of questions that no ad has (what people type around the product they mean). */
const FILLER = ['looking', 'need', 'recommend', 'good', 'cheap', 'gift', 'something', 'please', 'help', 'find', 'want', 'budget', 'wife', 'friend', 'birthday', 'suggest'];
/** Subjects no ad of the catalog is about. */
const ELSEWHERE = [
  'mortgage', 'refinance', 'tax', 'visa', 'lawyer', 'divorce', 'insurance', 'flight', 'delay', 'compensation', 'quantum', 'physics', 'sonnet',
  'poem', 'election', 'vaccine', 'symptom', 'fever', 'password', 'reset', 'pension', 'salary', 'negotiation', 'parliament', 'volcano',
  'eclipse', 'grammar', 'algebra', 'homework', 'weather', 'forecast', 'traffic', 'parking', 'ticket', 'recipe', 'lasagna', 'dinosaur',
];

const ONSETS = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'br', 'kr', 'tr', 'pl', 'st', 'gr', 'dr'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
const ENDS = ['z', 'x', 'rz', 'lx', 'nz', 'ux'];

function buildTailWords(): string[][] {
  const seen = new Set<string>();
  const rng = prng(7);
  return CATEGORY_NAMES.map(() => {
    const words: string[] = [];
    while (words.length < TAIL_WORDS_PER_CATEGORY) {
      const syllables = 2 + Math.floor(rng() * 2);
      let word = '';
      for (let s = 0; s < syllables; s++) word += ONSETS[Math.floor(rng() * ONSETS.length)] + VOWELS[Math.floor(rng() * VOWELS.length)];
      word += ENDS[Math.floor(rng() * ENDS.length)];
      if (!seen.has(word)) {
        seen.add(word);
        words.push(word);
      }
    }
    return words;
  });
}

/** TAIL_WORDS[c][r]: the tail word of rank r+1 of category c. */
export const TAIL_WORDS = buildTailWords();

const pick = <T>(rng: () => number, list: readonly T[]): T => list[Math.floor(rng() * list.length)];
/** A rank in [0, n) with probability ∝ 1/(rank + 1) (log-uniform: Zipf with exponent 1). */
const zipf = (rng: () => number, n: number): number => Math.min(n - 1, Math.floor(Math.exp(rng() * Math.log(n + 1))) - 1);
const tail = (rng: () => number, category: number): string => TAIL_WORDS[category][zipf(rng, TAIL_WORDS_PER_CATEGORY)];
const capital = (word: string) => word[0].toUpperCase() + word.slice(1);

/** The category of ad i. */
export const categoryOf = (i: number): string => CATEGORY_NAMES[i % CATEGORY_NAMES.length];

/** Ad number i (0-based) of the catalog `seed`. */
export function generateAd(i: number, seed = 1): CatalogAd {
  const rng = prng(seed * 1_000_003 + i);
  const c = i % CATEGORY_NAMES.length;
  const core = CATEGORIES[CATEGORY_NAMES[c]];
  const brand = capital(tail(rng, c));
  const model = capital(tail(rng, c));
  const [a, b, d, e] = [pick(rng, core), pick(rng, core), pick(rng, core), pick(rng, core)];
  const common = () => pick(rng, COMMON_WORDS);
  const title = rng() < 0.5 ? `${brand} ${model} ${a} ${b}` : `${brand} ${model} ${common()} ${a} ${b}`;
  return {
    ad_id: `ad_gen_${String(i).padStart(7, '0')}`,
    product_id: `prod_gen_${String(i).padStart(7, '0')}`,
    product_title: title,
    weave_summary: `The ${brand} ${model} is a ${common()} ${d} ${a} with ${tail(rng, c)} and ${common()} ${e} for ${tail(rng, c)} ${b} fans.`,
    tail_summary: `${capital(common())} ${a} ${b}: ${brand} ${model}.`,
    creative_input: { short_description: `${capital(common())} ${d} with ${tail(rng, c)} ${tail(rng, c)}.`, category: CATEGORY_NAMES[c], price: `${19 + (i % 300)}.00 USD` },
    landing_url: `https://shop.example.com/gen/${i}`,
    keywords: [`${a} ${b}`, d, e, tail(rng, c), common()],
    active: true,
  };
}

/** A labelled question: the category its answers should come from, or null when nothing should be found. */
export interface LabelledQuestion {
  query: string;
  expected: string | null;
}

/** A question of 2–9 words about category c: one or two of its core words, maybe a tail word or two, filler and common words around them. */
export function questionAbout(rng: () => number, c: number): string {
  const words: string[] = [];
  if (rng() < 0.6) words.push(pick(rng, FILLER));
  if (rng() < 0.4) words.push(pick(rng, COMMON_WORDS));
  const tails = Math.floor(rng() * 3);
  for (let t = 0; t < tails; t++) words.push(tail(rng, c));
  const cores = 1 + Math.floor(rng() * 2);
  for (let k = 0; k < cores; k++) words.push(pick(rng, CATEGORIES[CATEGORY_NAMES[c]]));
  if (rng() < 0.5) words.push('for', 'my', pick(rng, FILLER));
  while (words.length < 2) words.push(pick(rng, FILLER));
  return words.slice(0, 9).join(' ');
}

/** A question about something no ad is about (half of them with one common word, which most ads have). */
export function questionAboutNothing(rng: () => number): string {
  const words = [pick(rng, FILLER), pick(rng, ELSEWHERE), pick(rng, ELSEWHERE)];
  if (rng() < 0.5) words.push(pick(rng, COMMON_WORDS));
  return words.join(' ');
}

/** The labelled set: `perCategory` questions per category, then `nothing` questions that should find nothing. */
export function labelledQuestions(perCategory: number, nothing: number, seed = 20): LabelledQuestion[] {
  const rng = prng(seed);
  const questions: LabelledQuestion[] = [];
  for (let q = 0; q < perCategory; q++) for (let c = 0; c < CATEGORY_NAMES.length; c++) questions.push({ query: questionAbout(rng, c), expected: CATEGORY_NAMES[c] });
  for (let q = 0; q < nothing; q++) questions.push({ query: questionAboutNothing(rng), expected: null });
  return questions;
}

if (process.argv[1]?.endsWith('catalog-generator.js') && process.argv[2] === 'questions') {
  process.stdout.write(`${JSON.stringify(labelledQuestions(20, 40), null, 1)}\n`);
}
