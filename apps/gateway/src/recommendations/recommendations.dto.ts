import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { RECOMMEND_MAX_RESULTS, type RecommendHttpResponse, type RecommendationView } from '#libs/contracts';

/**
 * OpenAPI schemas of the answer of POST /agent/recommend (its body is RecommendHttpBodyDto of
 * libs/contracts). The interfaces of libs/contracts stay the definition; `implements` makes the
 * compiler refuse a class that lacks one of their fields.
 */

export const NOT_FOUND_MESSAGE = 'No recommendations found for this query.';

export const RECOMMEND_RESPONSE_EXAMPLE: RecommendHttpResponse = {
  request_id: '8f1c2b7e-3f0a-4c55-9d3e-0b6a1f2e9c41',
  query: 'lightweight running shoes for a first marathon',
  recommendations: [
    {
      recommendation_id: 'rec_5kQ2m9XcTz',
      ad_id: 'ad_trail_runner_2',
      product_id: 'prod_trail_runner_2',
      product_title: 'Trail Runner 2 — lightweight running shoe',
      click_url: 'https://api.weave.example/track/click?t=eyJ2IjoxLCJraW5kIjoiY2xpY2tlZCIs….Qm9n…',
      exposure_url: 'https://api.weave.example/track/exposure?t=eyJ2IjoxLCJraW5kIjoic2hvd24iLC….c2ln…',
      weave_summary: 'The Trail Runner 2 weighs 220 g and is built for long distances.',
      tail_summary: 'Looking for marathon shoes? Try the Trail Runner 2.',
      creative_input: { short_description: 'Lightweight, cushioned running shoe for long distances.' },
      contextual_relevance_score: 87.5,
    },
  ],
};

export const NOT_FOUND_EXAMPLE: RecommendHttpResponse = {
  request_id: '0d7e5a1c-9b2f-4e61-8a0c-5c3d2e1f4b6a',
  query: 'qwxz plorf',
  recommendations: [],
  error: NOT_FOUND_MESSAGE,
};

const EXAMPLE_RECOMMENDATION = RECOMMEND_RESPONSE_EXAMPLE.recommendations[0];

@ApiSchema({ name: 'Recommendation', description: 'One recommendation with the fields of the SPEC.' })
export class RecommendationDto implements RecommendationView {
  @ApiProperty({ type: 'string', description: 'Recommendation identifier.', example: EXAMPLE_RECOMMENDATION.recommendation_id })
  recommendation_id: string;

  @ApiProperty({ type: 'string', description: 'Ad identifier.', example: EXAMPLE_RECOMMENDATION.ad_id })
  ad_id: string;

  @ApiProperty({ type: 'string', description: 'Product identifier.', example: EXAMPLE_RECOMMENDATION.product_id })
  product_id: string;

  @ApiProperty({ type: 'string', description: 'Product or service title.', example: EXAMPLE_RECOMMENDATION.product_title })
  product_title: string;

  @ApiProperty({
    type: 'string',
    format: 'uri',
    description: 'Tracking URL for clicks: link to it; it records the click and redirects (302) to the landing page. Use it exactly as given.',
    example: EXAMPLE_RECOMMENDATION.click_url,
  })
  click_url: string;

  @ApiProperty({
    type: 'string',
    format: 'uri',
    description: 'Tracking URL for exposures: request it (GET, answers 204) when the recommendation is shown. Use it exactly as given.',
    example: EXAMPLE_RECOMMENDATION.exposure_url,
  })
  exposure_url: string;

  @ApiPropertyOptional({ type: 'string', description: 'Summary for the weave format.', example: EXAMPLE_RECOMMENDATION.weave_summary })
  weave_summary?: string;

  @ApiPropertyOptional({ type: 'string', description: 'Summary for the tail format.', example: EXAMPLE_RECOMMENDATION.tail_summary })
  tail_summary?: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    properties: { short_description: { type: 'string', description: 'Short description of the product.' } },
    description: 'Creative content with product details; contains at least an optional short_description.',
    example: EXAMPLE_RECOMMENDATION.creative_input,
  })
  creative_input: { short_description?: string; [key: string]: unknown };

  @ApiProperty({ type: 'number', minimum: 0, maximum: 100, description: 'Relevance to the query, 0 to 100.', example: EXAMPLE_RECOMMENDATION.contextual_relevance_score })
  contextual_relevance_score: number;
}

@ApiSchema({
  name: 'RecommendResponse',
  description: `The recommendations for the query, best first (at most ${RECOMMEND_MAX_RESULTS}). An empty list means none were found (not an error) and comes with error.`,
})
export class RecommendResponseDto implements RecommendHttpResponse {
  @ApiProperty({ type: 'string', description: 'Request identifier (the X-Request-Id of the answer); quote it to support.', example: RECOMMEND_RESPONSE_EXAMPLE.request_id })
  request_id: string;

  @ApiProperty({ type: 'string', description: 'The original query.', example: RECOMMEND_RESPONSE_EXAMPLE.query })
  query: string;

  @ApiProperty({ type: () => [RecommendationDto], maxItems: RECOMMEND_MAX_RESULTS, description: 'The recommendations, best first; empty when none were found.' })
  recommendations: RecommendationDto[];

  @ApiPropertyOptional({ type: 'string', description: 'Present when recommendations is empty: why nothing was found.', example: NOT_FOUND_MESSAGE })
  error?: string;
}
