import { Check, Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { AdContentColumns } from './ad-content.entity.js';
import { RECOMMENDATIONS_SCHEMA } from '#libs/catalog-core';

/**
 * The expression of the generated `search_vector` column, as migration 1764460800000 created it
 * and as migration 1764547200000 recorded it in TypeORM's metadata table (where TypeORM looks it
 * up to compare it with this entity): weights A (title), B (keywords), C (summaries and short
 * description), under the `english` configuration (CATALOG_TEXT_SEARCH_CONFIG).
 */
export const AD_SEARCH_VECTOR_EXPRESSION =
  `setweight(to_tsvector('english'::regconfig, product_title), 'A')` +
  ` || setweight(jsonb_to_tsvector('english'::regconfig, keywords, '["string"]'), 'B')` +
  ` || setweight(to_tsvector('english'::regconfig, coalesce(weave_summary, '')), 'C')` +
  ` || setweight(to_tsvector('english'::regconfig, coalesce(tail_summary, '')), 'C')` +
  ` || setweight(to_tsvector('english'::regconfig, coalesce(creative_input ->> 'short_description', '')), 'C')`;

/**
 * An ad of the catalog, upserted by `ops ads import`. Triggers keep its words in the word index
 * the search reads (ad_terms, lexeme_stats, catalog_stats: migration 1764633600000).
 */
@Entity({ schema: RECOMMENDATIONS_SCHEMA, name: 'ads' })
@Check('ads_creative_input_check', `jsonb_typeof(creative_input) = 'object'`)
@Check('ads_landing_url_check', `landing_url ~* '^https?://'`)
@Check('ads_keywords_check', `jsonb_typeof(keywords) = 'array'`)
export class AdEntity extends AdContentColumns {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'ads_pkey' })
  ad_id: string;

  @Column({ type: 'jsonb', default: [] })
  keywords: string[];

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created_at: Date;

  /** Set by PostgreSQL when an import changes the ad (TypeORM writes DEFAULT on update). */
  @UpdateDateColumn({ type: 'timestamptz', default: () => 'now()' })
  updated_at: Date;

  /** Written by PostgreSQL only; read by the word-index triggers and the search (AdSearchRepository), never selected by default. */
  @Column({
    type: 'tsvector',
    nullable: true,
    generatedType: 'STORED',
    asExpression: AD_SEARCH_VECTOR_EXPRESSION,
    select: false,
    insert: false,
    update: false,
  })
  search_vector: string | null;
}
