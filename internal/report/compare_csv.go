package report

import (
	"strings"
	"unicode"

	"github.com/linecheck/linecheck/internal/compare"
)

// CompareCSVNames are the tables `compare --format csv --table NAME` can
// write, the default first; usage, carriers, throughput and paths exist
// when the comparison has GPU offers, users with carriers, bw results or
// multipath traces; horizon when it has a horizon (horizon_months, --horizon);
// routes-seen when a recorded forward or return is traces over days; families
// when a candidate is judged per address family.
var CompareCSVNames = []string{"ranking", "checks", "items", "targets", "routes", "usage", "carriers", "throughput", "gpu", "paths", "horizon", "routes-seen", "families"}

// compareCSVOrder names CompareTables' tables by their titles' beginnings.
var compareCSVOrder = []struct{ prefix, name string }{
	{"Ranking", "ranking"}, {"SLA checks", "checks"}, {"Monthly cost breakdown", "items"}, {"Probe targets", "targets"},
	{"Route evidence", "routes"}, {"GPU usage", "usage"}, {"Three networks", "carriers"}, {"Throughput", "throughput"},
	{"GPU delivery", "gpu"}, {"Paths", "paths"}, {"Horizon", "horizon"}, {"Routes seen", "routes-seen"}, {"Address families", "families"},
}

// CompareCSVTables are compare's tables for machines, each one tidy: named
// (Table.Name, what --table picks), snake_case column names with the unit in
// the name (rtt_p50_ms, loss_fraction), full-precision figures, an empty
// cell where a figure has no data.
func CompareCSVTables(r *compare.Result) []Table {
	var out []Table
	for _, t := range CompareTables(r, FormatCSV) {
		for _, o := range compareCSVOrder {
			if strings.HasPrefix(t.Title, o.prefix) {
				t.Name = o.name
			}
		}
		if t.Name == "" {
			continue
		}
		t.Title, t.Notes = "", nil
		hs := make([]string, len(t.Headers))
		for i, h := range t.Headers {
			hs[i] = csvColumn(h)
		}
		t.Headers = hs
		rows := make([][]string, len(t.Rows))
		for i, row := range t.Rows {
			rows[i] = make([]string, len(row))
			for j, c := range row {
				if c != "-" {
					rows[i][j] = c
				}
			}
		}
		t.Rows = rows
		out = append(out, t)
	}
	return out
}

// csvColumn turns a table header into a CSV column name: "p50 ms" →
// "p50_ms", "loss" → "loss_fraction" (CSV carries loss as a fraction),
// "monthly CNY" → "monthly_CNY".
func csvColumn(h string) string {
	switch h {
	case "loss":
		return "loss_fraction"
	case "idle (0 h)":
		return "idle_amount"
	case "idle share":
		return "idle_share_fraction"
	case "used h":
		return "used_hours"
	case "per used GPU-h":
		return "per_used_gpu_hour"
	}
	var b strings.Builder
	for _, c := range strings.TrimSpace(h) {
		switch {
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}
