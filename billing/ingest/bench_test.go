package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// BenchmarkReadCSVYear reads a year of 5-minute samples for 10 interfaces
// (~50 MB, one CSV with an interface column) keeping June, as
// `linecheck bill --period 2026-06` does. bench/bill/run.sh times the full
// 100-interface year against pandas and wc -l.
func BenchmarkReadCSVYear(b *testing.B) {
	path := filepath.Join(b.TempDir(), "year.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for t := start; t.Year() == 2026; t = t.Add(5 * time.Minute) {
		ts := t.Format(time.RFC3339)
		for i := range 10 {
			fmt.Fprintf(w, "%s,eth%03d,%d,%d\n", ts, i, 1000000+i*7+int(t.Unix()%977), 500000+i)
		}
	}
	w.Flush()
	f.Close()
	st, _ := os.Stat(path)
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Unix()
	to := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for range b.N {
		ss, err := ReadFile(path, ReadOptions{From: from, To: to})
		if err != nil {
			b.Fatal(err)
		}
		if len(ss) != 10 || len(ss[0].Slots) != 8640 {
			b.Fatalf("%d series, %d slots", len(ss), len(ss[0].Slots))
		}
	}
}

// BenchmarkReadCSVFile reads the CSV named by $LINECHECK_BENCH_CSV (e.g. the
// file bench/bill/run.sh generates) keeping June 2026; for profiling.
func BenchmarkReadCSVFile(b *testing.B) {
	path := os.Getenv("LINECHECK_BENCH_CSV")
	if path == "" {
		b.Skip("set LINECHECK_BENCH_CSV to a CSV to read")
	}
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Unix()
	to := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for range b.N {
		if _, err := ReadFile(path, ReadOptions{From: from, To: to}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBillFile reads $LINECHECK_BENCH_CSV for $LINECHECK_BENCH_PERIOD
// (default 2026-07) and bills every series without offers on all cores, as
// `linecheck bill --period` does: the profile behind bench/bill/README.md.
func BenchmarkBillFile(b *testing.B) {
	path := os.Getenv("LINECHECK_BENCH_CSV")
	if path == "" {
		b.Skip("set LINECHECK_BENCH_CSV to a CSV to read")
	}
	month := os.Getenv("LINECHECK_BENCH_PERIOD")
	if month == "" {
		month = "2026-07"
	}
	p, err := billing.ParseMonth(month, time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for range b.N {
		ss, err := ReadFile(path, ReadOptions{From: p.Start.Unix(), To: p.End.Unix()})
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		next := make(chan *billing.Series)
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for s := range next {
					if _, err := billing.BillSeries(s, p, nil, billing.Options{}); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for _, s := range ss {
			next <- s
		}
		close(next)
		wg.Wait()
	}
}

// BenchmarkPromMatrix decodes a query_range answer of 100 series × a month
// of 5-minute points and builds the series: the per-point cost of
// `bill --prometheus` (bench/bill/run.sh times 1,000 series end to end).
func BenchmarkPromMatrix(b *testing.B) {
	var body bytes.Buffer
	body.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	const from = 1782864000
	for k := range 100 {
		if k > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"metric":{"ifName":"eth%03d"},"values":[`, k)
		for i := range 8928 {
			if i > 0 {
				body.WriteByte(',')
			}
			fmt.Fprintf(&body, `[%d,"%s"]`, from+300+i*300, strconv.FormatFloat(float64((i*7919+k)%100003)*8/300*1000, 'f', -1, 64))
		}
		body.WriteString("]}")
	}
	body.WriteString("]}}")
	b.SetBytes(int64(body.Len()))
	for range b.N {
		var res []*PromResult
		if _, err := DecodePromMatrix(bytes.NewReader(body.Bytes()), "p", PromDecodeOptions{}, func(r *PromResult) error {
			res = append(res, r)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		ss, err := PromSeries(res, "p", ReadOptions{From: from, To: from + 8928*300}, PromOptions{Step: 300})
		if err != nil || len(ss) != 100 {
			b.Fatal(err)
		}
	}
}
