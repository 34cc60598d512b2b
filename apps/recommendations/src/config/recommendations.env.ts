import { IsInt, IsNumber, Max, Min } from 'class-validator';
import { ServiceEnv } from '#libs/config';

/** Configuration of the recommendations service, validated once at start (DESIGN §2). */
export class RecommendationsEnv extends ServiceEnv {
  /** HTTP listener for health and metrics only. */
  @IsInt() @Min(0) @Max(65535)
  RECOMMENDATIONS_HTTP_PORT = 3104;

  /** Relevance floor: ads scoring below it (0–100) are never recommended. */
  @IsNumber() @Min(0) @Max(100)
  RECOMMENDATIONS_MIN_SCORE = 10;

  /** Weight of the conversation history (last user messages) against the query itself (1). */
  @IsNumber() @Min(0) @Max(1)
  RECOMMENDATIONS_CONTEXT_WEIGHT = 0.3;
}
