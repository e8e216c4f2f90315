/** The eight BFCL multi-turn API classes by their Python class names. */
import type { ApiContext, BfclApi } from './api.ts';
import { GorillaFileSystem } from './file-system.ts';
import { MathAPI } from './math.ts';
import { MessageAPI } from './message.ts';
import { TicketAPI } from './ticket.ts';
import { TradingBot } from './trading.ts';
import { TravelAPI } from './travel.ts';
import { TwitterAPI } from './twitter.ts';
import { VehicleControlAPI } from './vehicle.ts';

const CLASSES: Record<string, (ctx: ApiContext) => BfclApi> = {
  GorillaFileSystem: (ctx) => new GorillaFileSystem(ctx),
  MathAPI: () => new MathAPI(),
  MessageAPI: (ctx) => new MessageAPI(ctx),
  TwitterAPI: (ctx) => new TwitterAPI(ctx),
  TicketAPI: (ctx) => new TicketAPI(ctx),
  TradingBot: (ctx) => new TradingBot(ctx),
  TravelAPI: (ctx) => new TravelAPI(ctx),
  VehicleControlAPI: (ctx) => new VehicleControlAPI(ctx),
};

export const API_CLASSES = Object.keys(CLASSES);

export function createApi(className: string, ctx: ApiContext): BfclApi {
  const make = CLASSES[className];
  if (!make) throw new Error(`unknown BFCL API class ${className} (known: ${API_CLASSES.join(', ')})`);
  return make(ctx);
}
