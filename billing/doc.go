// Package billing simulates how providers bill recorded traffic: BillSeries
// prices one 5-minute Series for a Period under a list of Offers, producing
// the linecheck.bill/v1 Report. It never reads a file: package
// billing/ingest turns traffic logs into Series.
//
// The package is pure: time comes in as input (no clock reads), so every
// figure is reproducible. The definitions below are the ones the code uses;
// the code points here instead of repeating them.
//
// # Grid and rate
//
// A slot is 300 s, named by its start floor(t/300)·300. The rate of a slot is
// bytes·8/300 bit/s; Mbps is 10^6 bit/s. A coarse series (Step > 300 s) has
// its samples spread evenly over the 300 s slots they cover (by the readers);
// it is refused for percentile schemes (p95, peak, daily-peak-average) unless
// Options.AllowCoarse, because averaging hides the peaks the 95th is about.
// A series that mixes resolutions (Series.Parts: a vnstat export's 5-minute
// entries for the last 48 h and hourly or daily ones before, an MRTG log's
// consolidated rows) is coarse where a coarse part meets the period; volume
// schemes bill every part, and Samples.Resolutions says which rows priced what.
//
// # Period
//
// A Period is [Start, End): a calendar month in a named time zone
// (MonthPeriod), or explicit --from (inclusive) / --to (exclusive). A slot
// belongs to the period when its start is inside it. The expected number of
// slots is the number of multiples of 300 s in [Start, End): 8928 for a
// 31-day month, 8916 for a local month that loses an hour to DST (March in
// Europe) and 8940 for one that gains an hour (October in Europe).
//
// With Boundary librenms a slot belongs instead when its end lies in
// (Start, End − 1 s]: LibreNMS stamps each row at the end of the interval it
// measures and selects timestamp > from AND timestamp <= to, to being the
// last day's 23:59:59, so the period's last slot drops (8927 of a 31-day
// month) and a bill can be reconciled with LibreNMS to the cent.
//
// # Gaps
//
// Missing slots are counted (expected, present, missing, coverage) and listed
// as runs. Gaps "skip" (default) takes percentiles over present slots only;
// gaps "zero" counts every missing slot as a zero-rate sample (what rrdtool's
// PERCENT does with unknown rows and Cacti 0.8 does in sums). Volumes are the
// sum of present slots either way.
//
// # 95th-percentile methods
//
// Values are sorted ascending; n samples; rank is 1-based, computed in
// integers and clamped into 1..n:
//
//	nearest-rank  rank = ceil(95n/100)                  textbook, default
//	librenms      rank = max(1, round(95n/100) − 1), half away from zero (LibreNMS Billing.php since PR #18481:
//	              0-based index max(0, round(n/100·95) − 2) over 5-minute buckets)
//	librenms-legacy rank = round(95n/100), half away from zero (LibreNMS before PR #18481)
//	vnstat        rank = round(95n/100), half to even (vnstat >= 2.12, lrint)
//	rrdtool       rank = round(95(n-1)/100) + 1, half away from zero (VDEF PERCENT / PERCENTNAN >= 1.4)
//	cacti         rank = floor(95n/100) (Cacti 1.2: descending index ceil(0.05n))
//	linear        r = 95(n-1)/100, v = a[floor r]·(1-w) + a[floor r + 1]·w, w = r - floor r (Prometheus quantile_over_time)
//
// # Direction rules
//
//	greater  max(p95(in), p95(out))       most ISPs, LibreNMS default
//	max      p95 of per-slot max(in, out)  Tencent BWP
//	sum      p95 of per-slot in+out        LibreNMS "aggregate", vnstat total
//	in, out  one direction only
//
// The same rules apply to the peak, average and daily-peak-average statistics
// (greater = the larger of the two per-direction figures). Several ports on one
// bill are summed per slot first (Aggregate); per-port percentiles are never
// combined.
//
// # Schemes
//
//	fixed               port Mbps for a monthly price; reports utilisation and
//	                    slots above the port speed (flagged, never clamped)
//	per-gb              GB = bytes / base^3 (base 1000 or 1024) in the offer's
//	                    direction (default out), minus a free allowance, priced
//	                    by marginal tiers (each GB at the rate of its tier)
//	p95, peak, average, billable Mbps = the statistic under the offer's method
//	daily-peak-average  and direction; with prorate: valid-days the statistic
//	                    is taken over the slots of valid days (days with any
//	                    traffic) and multiplied by valid days / days in period;
//	                    then raised to min_share × (port or commit) Mbps;
//	                    amount = commit_price + max(0, billable − commit) ×
//	                    price_per_mbps (without a commit: billable ×
//	                    price_per_mbps).
//
// peak is the highest sample (or the nth highest with nth); daily-peak-average
// is the mean over days of each day's highest sample (Alibaba "average daily
// peak"; daily_nth and top_days give Tencent's "5th peak, top 5 days").
//
// # Carrying the traffic
//
// An offer that states port_mbps is judged against the traffic (Bill.Carry,
// JudgeCarry): a port carries its speed in each direction, so the larger of
// the 95th in and the 95th out (the offer's method) is held against it. Above
// the port the offer cannot carry the traffic and is never cheapest; when only
// some slots exceed it (the peak), it carries the traffic with those slots
// counted inbound, outbound and in+out.
//
// # Precision and limits
//
// Float figures are rounded to 12 significant digits (Sig), which drops float
// noise and keeps far more than any counter measures. Traffic whose period
// volume does not fit int64 bytes (9.2 EB) is refused (ErrTooLarge), never
// wrapped.
//
// # GPU usage
//
// A compute item with a billing model is priced at the buyer's used hours U
// (Options.UsageHours, else the offer's usage, else the file's, else every
// hour) in a period of H hours: hourly cards × U × price; monthly
// price_per_month; reserved cards × H × price + upfront / term_months; spot
// cards × U × (1 + interruption_overhead) × price. Every other item bills for
// the whole period. A bill's usage block gives the total at U = 0 (the idle
// amount) and the cost per used GPU-hour; the comparison lists the used hours
// in (0, H] at which two offers' totals cross (break_even_hours).
//
// # Money
//
// Prices are exact decimals (github.com/shopspring/decimal), read from the
// YAML text as written (an unquoted 19.50 is 19.50); every item keeps its
// exact amount and the offer's total is rounded once, half away from zero,
// to the currency's minor unit (2 digits; 0 for JPY and KRW). Amounts read
// from a file are below 10^15 with at most 12 decimal places (ParseAmount).
package billing
