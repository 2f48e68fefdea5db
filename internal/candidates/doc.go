// Package candidates is the candidates file's schema and its loading: the
// vantage, the users, each candidate's targets, recordings, offer and
// contract blocks (gpu:, host:, interconnect:, bandwidth_test:), the
// traffic profile, fx: and the SLA thresholds.
//
// Load / LoadWith read a file strictly: every key and value is checked and
// an error names the file and line (`candidates.yaml:12:
// candidates[1].targets[0].port: required for tcp`); LoadOptions make parts
// optional for the TUI and serve (TargetsOnly) or refuse what a live run
// never probes (Live: recorded_only files, documentation addresses, which
// probe.CheckTarget refuses). ErrRecordedOnly is what a live run of a
// recorded_only file returns.
//
// The package judges nothing: internal/verdict checks measurements against
// the SLA this package reads, and internal/compare runs and reports.
package candidates
