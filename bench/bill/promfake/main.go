// Command promfake serves the bill benchmark's traffic as a Prometheus
// /api/v1/query_range API on loopback, so that `linecheck bill --prometheus`
// can be timed on the same data as the CSV (bench/bill/run.sh). It loads
// one period of a benchmark CSV (timestamp,interface,in_bytes,out_bytes,
// unix seconds) and answers the queries "in" and "out" with one series per
// interface ({ifName="ethNNN"}), the value at t being the bit rate of the
// slot that ends at t, as rate(x[5m])*8 gives. It refuses more than
// -max-points points per series, as Prometheus does.
//
//	promfake -csv big.csv -from 1782864000 -to 1785542400
//
// It prints its address (127.0.0.1:PORT) on the first line of stdout.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	path := flag.String("csv", "", "benchmark CSV with unix-seconds timestamps")
	from := flag.Int64("from", 0, "first slot start (unix seconds)")
	to := flag.Int64("to", 0, "end of the period (unix seconds, exclusive)")
	maxPoints := flag.Int64("max-points", 11000, "points per series per request")
	flag.Parse()
	if *path == "" || *to <= *from {
		fmt.Fprintln(os.Stderr, "promfake: -csv FILE -from T -to T")
		os.Exit(2)
	}
	tr, err := loadTraffic(*path, *from, *to)
	if err != nil {
		fmt.Fprintln(os.Stderr, "promfake:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "promfake:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	os.Stdout.Sync()
	http.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) { tr.queryRange(w, r, *maxPoints) })
	srv := &http.Server{}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "promfake:", err)
	}
}

// traffic is the period's bit rates per interface and slot.
type traffic struct {
	from, n int64 // the first slot's start, the number of slots
	names   []string
	in, out [][]float64 // [interface][slot]
}

// loadTraffic reads the slots of [from, to) from the benchmark CSV.
func loadTraffic(path string, from, to int64) (*traffic, error) {
	tr := &traffic{from: from, n: (to - from) / 300}
	index := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 1<<20))
	sc.Scan() // header
	for sc.Scan() {
		line := sc.Bytes()
		c := bytes.IndexByte(line, ',')
		if c < 0 {
			continue
		}
		t, _ := strconv.ParseInt(string(line[:c]), 10, 64)
		if t < from || t >= to {
			continue
		}
		fl := bytes.Split(line, []byte{','})
		k, ok := index[string(fl[1])]
		if !ok {
			k = len(tr.names)
			index[string(fl[1])] = k
			tr.names = append(tr.names, string(fl[1]))
			tr.in = append(tr.in, make([]float64, tr.n))
			tr.out = append(tr.out, make([]float64, tr.n))
		}
		i, _ := strconv.ParseFloat(string(fl[2]), 64)
		o, _ := strconv.ParseFloat(string(fl[3]), 64)
		tr.in[k][(t-from)/300] = i * 8 / 300
		tr.out[k][(t-from)/300] = o * 8 / 300
	}
	return tr, nil
}

// queryRange answers a query_range request for "in" or "out", refusing
// more than maxPoints points per series as Prometheus does.
func (tr *traffic) queryRange(w http.ResponseWriter, r *http.Request, maxPoints int64) {
	q := r.URL.Query()
	start, _ := strconv.ParseInt(q.Get("start"), 10, 64)
	end, _ := strconv.ParseInt(q.Get("end"), 10, 64)
	step, _ := strconv.ParseInt(q.Get("step"), 10, 64)
	var vals [][]float64
	switch q.Get("query") {
	case "in":
		vals = tr.in
	case "out":
		vals = tr.out
	}
	w.Header().Set("Content-Type", "application/json")
	if step <= 0 || (end-start)/step+1 > maxPoints {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"}`)
		return
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	defer bw.Flush()
	bw.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	buf := make([]byte, 0, 64)
	for k, name := range tr.names {
		if k > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, `{"metric":{"ifName":%q},"values":[`, name)
		first := true
		for t := start; t <= end; t += step {
			i := (t - 300 - tr.from) / 300 // the slot ending at t
			if i < 0 || i >= tr.n || vals == nil {
				continue
			}
			if !first {
				bw.WriteByte(',')
			}
			first = false
			buf = append(buf[:0], '[')
			buf = strconv.AppendInt(buf, t, 10)
			buf = append(buf, ',', '"')
			buf = strconv.AppendFloat(buf, vals[k][i], 'f', -1, 64)
			buf = append(buf, '"', ']')
			bw.Write(buf)
		}
		bw.WriteString("]}")
	}
	bw.WriteString("]}}")
}
