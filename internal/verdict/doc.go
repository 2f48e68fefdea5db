// Package verdict is linecheck's judgement: for one candidate of a
// candidates file (internal/candidates) it decides how good its line is,
// whether it meets the SLA, what it costs and how the candidates rank.
// compare's report, the TUI and serve render its Evaluation and never
// reassemble it.
//
// One definition of each rule lives here:
//   - windows: Window holds a target's latest ended probes, each with its
//     time; ResultBetween is the one window statistic over any span
//     [from, to) (loss, RTT percentiles, jitter; docs/definitions.md) and
//     Result its whole-window case. Windows are keyed by WindowKey (target
//     and address family, Family), so an evening span or an IPv6 target
//     beside an IPv4 one is data, not code;
//   - assembly: RouteQuality.AddTargets (the worst over the targets for
//     what the SLA bounds, the best minimum for the floor), SetFloor
//     (stretch), Evaluate (a measurement, recorded or live) and
//     EvaluateLive (a live surface's windows, recording and traces);
//   - the SLA: CheckSLA runs the table of checks, each check one file
//     (check_rtt_p95.go, check_loss.go, check_jitter.go,
//     check_line_class.go, check_stretch.go, check_path_mtu.go,
//     check_carrier.go, check_throughput.go) that registers its SLACheck;
//     a check without data fails (NoData). A new check is its file, its
//     threshold in candidates.SLA and its line in docs/compare.md. The
//     recorded delivery (GPU, host, interconnect) is EvaluateDelivery;
//   - money: NewPricing, Pricing.Monthly and Pricing.Rebill (billing's
//     bills, converted with one billing.FX — the file's fx:, else the offers
//     file's, Pricing.FX — and rounded once; amounts are billing.Money, exact
//     decimals, rendered only by the reports), with billing's judgement of
//     whether an offer's port can carry the traffic; the horizon and the
//     used hours (Pricing.Horizon, Pricing.UsageSummaryOf);
//   - ranking: RankLess over RankKey, Rank, RankingRule.
//
// Evaluation and the other judgement types are the candidates of the
// linecheck.compare/v1 document (compare.Result); a figure without data is
// null in it.
package verdict
