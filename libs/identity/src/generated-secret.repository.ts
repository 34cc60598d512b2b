import type { DataSource } from 'typeorm';
import { GeneratedSecretEntity } from './generated-secret.entity.js';

/**
 * Secrets generated once and shared through the identity schema. Replicas that start together
 * race safely: each inserts its own candidate if no row of that name exists (ON CONFLICT DO
 * NOTHING), then all read the row that won, so they end with one secret.
 */
export class GeneratedSecretRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The secret stored under `name`; `candidate` becomes it when there is none yet. */
  async getOrCreate(name: string, candidate: string): Promise<{ secret: string; created: boolean }> {
    const secrets = this.dataSource.getRepository(GeneratedSecretEntity);
    const inserted = await secrets
      .createQueryBuilder()
      .insert()
      .values({ name, secret: candidate })
      .orIgnore()
      .returning(['name'])
      .updateEntity(false)
      .execute();
    const stored = await secrets.findOneOrFail({ select: { secret: true }, where: { name } });
    return { secret: stored.secret, created: (inserted.raw as unknown[]).length > 0 };
  }
}
