import { Column } from 'typeorm';
import type { CatalogAd } from '#libs/catalog-core';

/**
 * The columns that describe an ad to a user: the catalog's (AdEntity) and the copy a recorded
 * recommendation keeps (RecommendationEntity), so a later catalog change does not alter a replay.
 */
export abstract class AdContentColumns {
  @Column({ type: 'text' })
  product_id: string;

  @Column({ type: 'text' })
  product_title: string;

  @Column({ type: 'text', nullable: true })
  weave_summary: string | null;

  @Column({ type: 'text', nullable: true })
  tail_summary: string | null;

  @Column({ type: 'jsonb' })
  creative_input: CatalogAd['creative_input'];

  @Column({ type: 'text' })
  landing_url: string;
}
