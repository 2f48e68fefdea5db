// Package promclient fetches range queries from a Prometheus-compatible HTTP
// API (Prometheus, Thanos, Mimir, VictoriaMetrics) and turns bit/s results into
// billing series.
//
// It speaks GET /api/v1/query_range directly (the response shapes are those of
// ../shared/reference/billing-examples/prometheus_query_range_*.json): the
// official Go API client would bring a larger dependency tree for one call, and
// the parts that matter here — splitting a month into requests under the
// server's points limit, retries with backoff, bearer/basic auth read from
// files, TLS options — are ours to get right either way.
//
// Prometheus refuses a range query of more than 11,000 points per series
// ("exceeded maximum resolution of 11,000 points per timeseries"), so a range
// is split into chunks of at most MaxPoints evaluation times each; chunks do
// not overlap, and the results are merged per label set.
package promclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxPoints is Prometheus' limit of points per series in one range query.
const DefaultMaxPoints = 11000

// Config holds the connection options.
type Config struct {
	URL                   string // base URL, e.g. http://127.0.0.1:9090 (a path prefix is kept)
	BearerTokenFile       string // file holding a bearer token (read for every request, so it may rotate)
	BasicAuthUser         string
	BasicAuthPasswordFile string
	TLSCA                 string        // PEM file of CAs to trust instead of the system pool
	TLSInsecure           bool          // skip certificate verification
	Timeout               time.Duration // per request (also sent as the query timeout); 0 = 60 s
	Retries               int           // extra attempts after a failed request (network error, 429, 5xx)
	MaxPoints             int           // points per series per request; 0 = DefaultMaxPoints
	// Backoff is the wait before the first retry; it doubles per retry, capped
	// at 30 s. 0 = 1 s.
	Backoff time.Duration
}

// Client queries one Prometheus server.
type Client struct {
	cfg  Config
	base *url.URL
	http *http.Client
}

// New checks cfg and returns a client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus %q: want an http:// or https:// URL", cfg.URL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxPoints <= 0 {
		cfg.MaxPoints = DefaultMaxPoints
	}
	if cfg.MaxPoints < 2 {
		return nil, fmt.Errorf("--max-points %d: must be at least 2", cfg.MaxPoints)
	}
	if cfg.Retries < 0 {
		return nil, fmt.Errorf("--retries %d: must not be negative", cfg.Retries)
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.BasicAuthUser != "" && cfg.BearerTokenFile != "" {
		return nil, errors.New("--bearer-token-file and --basic-auth-user: use one or the other")
	}
	if (cfg.BasicAuthUser == "") != (cfg.BasicAuthPasswordFile == "") {
		return nil, errors.New("--basic-auth-user and --basic-auth-password-file go together")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	if cfg.TLSCA != "" || cfg.TLSInsecure {
		tc := &tls.Config{InsecureSkipVerify: cfg.TLSInsecure} //nolint:gosec // asked for with --tls-insecure
		if cfg.TLSCA != "" {
			pem, err := os.ReadFile(cfg.TLSCA)
			if err != nil {
				return nil, fmt.Errorf("--tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca %s: no PEM certificate found", cfg.TLSCA)
			}
			tc.RootCAs = pool
		}
		tr.TLSClientConfig = tc
	}
	for _, f := range []string{cfg.BearerTokenFile, cfg.BasicAuthPasswordFile} {
		if f == "" {
			continue
		}
		if _, err := readSecret(f); err != nil {
			return nil, err
		}
	}
	return &Client{cfg: cfg, base: u, http: &http.Client{Transport: tr, Timeout: cfg.Timeout}}, nil
}

// Sample is one point of a range query result.
type Sample struct {
	T int64   // unix seconds (Prometheus may return fractions; the grid here is whole seconds)
	V float64 // value
}

// Series is one label set of a range query result.
type Series struct {
	Labels  map[string]string
	Samples []Sample // ascending by T, no duplicates
	// Skipped counts NaN and infinite values left out (they are gaps).
	Skipped int
}

// APIError is an error answer of the server ({"status":"error",...}) or an
// HTTP status without one.
type APIError struct {
	Status    int    // HTTP status
	ErrorType string // bad_data, execution, timeout, unavailable …
	Message   string
}

func (e *APIError) Error() string {
	if e.ErrorType != "" {
		return fmt.Sprintf("prometheus: HTTP %d: %s: %s", e.Status, e.ErrorType, e.Message)
	}
	return fmt.Sprintf("prometheus: HTTP %d: %s", e.Status, e.Message)
}

// retryable tells whether asking again may help: the server was overloaded,
// unavailable or timed out, as opposed to refusing the query itself.
func (e *APIError) retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500 || e.ErrorType == "timeout" ||
		e.ErrorType == "unavailable"
}

// Chunks splits the evaluation times start, start+step, …, ≤ end into
// non-overlapping [from, to] ranges of at most maxPoints times each.
func Chunks(start, end time.Time, step time.Duration, maxPoints int) [][2]time.Time {
	var out [][2]time.Time
	span := time.Duration(maxPoints-1) * step
	for s := start; !s.After(end); {
		e := s.Add(span)
		if e.After(end) {
			e = end
		}
		out = append(out, [2]time.Time{s, e})
		// The next chunk starts one step after the last time this one covers.
		last := s.Add(e.Sub(s) / step * step)
		s = last.Add(step)
	}
	return out
}

// QueryRange evaluates query at start, start+step, …, end, in as many requests
// as the points limit needs, and merges the results per label set.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Series, error) {
	if step <= 0 || step%time.Second != 0 {
		return nil, fmt.Errorf("prometheus: step %v: must be a whole number of seconds", step)
	}
	if end.Before(start) {
		return nil, fmt.Errorf("prometheus: range end %s is before start %s", end, start)
	}
	byKey := map[string]*Series{}
	for _, ch := range Chunks(start, end, step, c.cfg.MaxPoints) {
		res, err := c.queryRangeOnce(ctx, query, ch[0], ch[1], step)
		if err != nil {
			return nil, fmt.Errorf("query %q from %s to %s: %w", query,
				ch[0].UTC().Format(time.RFC3339), ch[1].UTC().Format(time.RFC3339), err)
		}
		for _, s := range res {
			k := LabelString(s.Labels, nil)
			m := byKey[k]
			if m == nil {
				m = &Series{Labels: s.Labels}
				byKey[k] = m
			}
			m.Samples = append(m.Samples, s.Samples...)
			m.Skipped += s.Skipped
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Series, 0, len(keys))
	for _, k := range keys {
		s := byKey[k]
		sort.Slice(s.Samples, func(i, j int) bool { return s.Samples[i].T < s.Samples[j].T })
		dedup := s.Samples[:0]
		for i, p := range s.Samples {
			if i > 0 && p.T == dedup[len(dedup)-1].T {
				continue
			}
			dedup = append(dedup, p)
		}
		s.Samples = dedup
		out = append(out, *s)
	}
	return out, nil
}

// queryRangeOnce runs one request, retrying what may succeed on a retry.
func (c *Client) queryRangeOnce(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Series, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1/query_range"
	q := url.Values{}
	q.Set("query", query)
	q.Set("start", strconv.FormatInt(start.Unix(), 10))
	q.Set("end", strconv.FormatInt(end.Unix(), 10))
	q.Set("step", strconv.FormatInt(int64(step/time.Second), 10))
	q.Set("timeout", c.cfg.Timeout.String())
	u.RawQuery = q.Encode()

	wait := c.cfg.Backoff
	var lastErr error
	for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("%w (after: %v)", ctx.Err(), lastErr)
			case <-time.After(wait):
			}
			wait = min(wait*2, 30*time.Second)
		}
		res, err := c.get(ctx, u.String())
		if err == nil {
			return res, nil
		}
		lastErr = err
		var ae *APIError
		if errors.As(err, &ae) && !ae.retryable() {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, err
		}
	}
	if c.cfg.Retries > 0 {
		return nil, fmt.Errorf("%w (gave up after %d attempts)", lastErr, c.cfg.Retries+1)
	}
	return nil, lastErr
}

type apiResponse struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string    `json:"metric"`
			Values [][2]json.RawMessage `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func (c *Client) get(ctx context.Context, u string) ([]Series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "linecheck")
	switch {
	case c.cfg.BearerTokenFile != "":
		tok, err := readSecret(c.cfg.BearerTokenFile)
		if err != nil {
			return nil, &APIError{Status: 0, ErrorType: "client", Message: err.Error()}
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	case c.cfg.BasicAuthUser != "":
		pw, err := readSecret(c.cfg.BasicAuthPasswordFile)
		if err != nil {
			return nil, &APIError{Status: 0, ErrorType: "client", Message: err.Error()}
		}
		req.SetBasicAuth(c.cfg.BasicAuthUser, pw)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("no answer within --timeout %v: %w", c.cfg.Timeout, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	var ar apiResponse
	jerr := json.Unmarshal(body, &ar)
	if resp.StatusCode != http.StatusOK || ar.Status != "success" {
		if jerr == nil && ar.Status == "error" {
			return nil, &APIError{Status: resp.StatusCode, ErrorType: ar.ErrorType, Message: ar.Error}
		}
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if resp.StatusCode == http.StatusOK {
			return nil, &APIError{Status: resp.StatusCode, ErrorType: "bad_response", Message: "not a Prometheus API answer: " + msg}
		}
		return nil, &APIError{Status: resp.StatusCode, Message: msg}
	}
	if jerr != nil {
		return nil, &APIError{Status: resp.StatusCode, ErrorType: "bad_response", Message: jerr.Error()}
	}
	if ar.Data.ResultType != "matrix" {
		return nil, &APIError{Status: resp.StatusCode, ErrorType: "bad_response",
			Message: fmt.Sprintf("resultType %q, want matrix", ar.Data.ResultType)}
	}
	out := make([]Series, 0, len(ar.Data.Result))
	for _, r := range ar.Data.Result {
		s := Series{Labels: r.Metric, Samples: make([]Sample, 0, len(r.Values))}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		for _, v := range r.Values {
			var ts float64
			if err := json.Unmarshal(v[0], &ts); err != nil {
				return nil, &APIError{Status: 200, ErrorType: "bad_response", Message: "timestamp " + string(v[0]) + ": " + err.Error()}
			}
			var vs string
			if err := json.Unmarshal(v[1], &vs); err != nil {
				return nil, &APIError{Status: 200, ErrorType: "bad_response", Message: "value " + string(v[1]) + ": " + err.Error()}
			}
			val, err := strconv.ParseFloat(vs, 64)
			if err != nil {
				return nil, &APIError{Status: 200, ErrorType: "bad_response", Message: "value " + vs + ": not a number"}
			}
			if math.IsNaN(val) || math.IsInf(val, 0) {
				s.Skipped++
				continue
			}
			s.Samples = append(s.Samples, Sample{T: int64(math.Round(ts)), V: val})
		}
		out = append(out, s)
	}
	return out, nil
}

func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	return s, nil
}

// LabelString renders labels as {a="x",b="y"} in name order, leaving out the
// names in skip.
func LabelString(l map[string]string, skip map[string]bool) string {
	names := make([]string, 0, len(l))
	for k := range l {
		if !skip[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + strconv.Quote(l[k]))
	}
	b.WriteByte('}')
	return b.String()
}
