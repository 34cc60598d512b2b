import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { KeysController } from './keys.controller.js';
import { KeysService } from './keys.service.js';

/** GET, POST and DELETE /agent/keys: the owner manages the platform's API keys (identity schema, audit trail). */
@Module({
  imports: [AuthModule],
  controllers: [KeysController],
  providers: [KeysService],
})
export class KeysModule {}
