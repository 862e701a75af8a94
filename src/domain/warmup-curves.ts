/**
 * The built-in warm-up curves (issue 35): messages per day that a new sending source may carry to
 * one provider's sites on day 1, 2, … of its plan, beside the provider table (site-limits.ts,
 * whose ids key them). After a curve's last day the source carries what it is given, uncapped.
 *
 * The providers publish no numbers, only the shape: Gmail's sender guidelines ask a new IP to
 * increase its volume slowly and answer a sudden volume with 421 4.7.28; Yahoo's sender hub says
 * the same and defers with [TSS04]; Microsoft throttles with 4.7.500. The ESPs that warm IPs up
 * for their customers do it on a schedule of weeks: SendGrid's automated warm-up holds hourly caps
 * that grow with the IP's age until they lift, Amazon SES reports a dedicated IP's
 * WarmupPercentage until its warm-up is DONE, and Halon's warm-up plugin takes per-day schedules
 * per class of destination (Google's MX hosts, …). The curves below follow that shape: about 50
 * a day per big provider, growing about half again each day (doubling every other day) for 30
 * days, and then no cap. Microsoft, Yahoo (with AOL), Apple, United Internet (GMX, web.de) and
 * Comcast throttle new IPs hardest, so theirs start lower and grow slower over the same month.
 *
 * The hourly cap is derived from the day's (warmup-plan.ts, hourlyCap).
 */

/** A provider id of site-limits.ts's PROVIDER_LIMITS, or OTHER_SITES. */
export type WarmupSiteKey = string;

/** The curve of sites not in the provider table: each such site (an MX site of its own) has its own count. */
export const OTHER_SITES = 'other';

/** Gmail and the providers that take volume well: 50 a day, doubling every other day, 30 days. */
const BROAD: readonly number[] = [
  50, 75, 100, 150, 200, 300, 400, 600, 800, 1_000, 1_500, 2_000, 3_000, 4_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000, 40_000, 50_000, 75_000, 100_000, 150_000, 200_000,
  300_000, 400_000, 500_000, 750_000,
];

/** The strict receivers: 20 a day, doubling about every third day, 30 days. */
const STRICT: readonly number[] = [
  20, 30, 40, 50, 75, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1_000, 1_250, 1_500, 2_000, 2_500, 3_000, 4_000, 5_000, 6_000, 8_000, 10_000, 12_500, 15_000, 20_000, 25_000,
  30_000,
];

/**
 * A site outside the table is one small organisation's server: it sees little of any sender and
 * rarely throttles, but a new IP sending it a burst still looks like spam. Two weeks from 100.
 */
const SMALL_SITES: readonly number[] = [100, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 20_000];

/** The built-in curve of each provider id (site-limits.ts) and of OTHER_SITES. */
export const DEFAULT_WARMUP_CURVES: Readonly<Record<WarmupSiteKey, readonly number[]>> = {
  google: BROAD,
  microsoft: STRICT,
  yahoo: STRICT,
  apple: STRICT,
  'united-internet': STRICT,
  'mail-ru': BROAD,
  yandex: BROAD,
  proton: BROAD,
  fastmail: BROAD,
  comcast: STRICT,
  [OTHER_SITES]: SMALL_SITES,
};
