// Package promclient fetches range queries from a Prometheus-compatible HTTP
// API (Prometheus, Thanos, Mimir, VictoriaMetrics) and returns the raw
// matrix; billing/ingest turns it into billing series by the same rules as a
// saved answer, so a saved file and a live fetch name the same data the same.
//
// It speaks GET /api/v1/query_range directly, decoding each answer as it
// streams in (ingest.DecodePromMatrix: memory holds the points, never the
// body), with at most Config.Concurrency requests in flight. The
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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linecheck/linecheck/billing/ingest"
)

// DefaultMaxPoints is Prometheus' limit of points per series in one range query.
const DefaultMaxPoints = 11000

// DefaultConcurrency is the number of requests in flight at once by default:
// enough to overlap the server's evaluation with the transfer and decode,
// few enough not to load a shared Prometheus.
const DefaultConcurrency = 4

// DefaultMaxSamples bounds the points one fetch keeps (16 bytes each, so
// about 800 MB): a month of 5-minute points is 8,928 per series and
// direction, so this holds 2,800 interfaces in both directions.
const DefaultMaxSamples = 50_000_000

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
	// Concurrency is the most requests in flight at once; 0 = DefaultConcurrency.
	Concurrency int
	// MaxSamples bounds the points kept over a whole fetch (all requests);
	// 0 = DefaultMaxSamples. Past it the fetch fails, saying so.
	MaxSamples int64
	// Backoff is the wait before the first retry; it doubles per retry, capped
	// at 30 s. 0 = 1 s.
	Backoff time.Duration
}

// Client queries one Prometheus server.
type Client struct {
	cfg  Config
	base *url.URL
	http *http.Client
	sem  chan struct{} // one token per request in flight
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
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.MaxSamples <= 0 {
		cfg.MaxSamples = DefaultMaxSamples
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
	return &Client{cfg: cfg, base: u, http: &http.Client{Transport: tr, Timeout: cfg.Timeout},
		sem: make(chan struct{}, cfg.Concurrency)}, nil
}

// APIError is an error answer of the server ({"status":"error",...}) or an
// HTTP status without one.
type APIError struct {
	Status    int    // HTTP status
	ErrorType string // bad_data, execution, timeout, unavailable … (client: refused here)
	Message   string
	Err       error // the cause, when the client refused the answer (ingest.ErrTooLarge)
}

// Unwrap returns the cause.
func (e *APIError) Unwrap() error { return e.Err }

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
// as the points limit needs (at most Config.Concurrency at once), and merges
// the results per label set: the raw matrix, ascending by time, one point
// per time.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]*ingest.PromResult, error) {
	var budget budget
	budget.left = c.cfg.MaxSamples
	return c.queryRange(ctx, query, start, end, step, &budget)
}

// budget is the points a fetch may still keep, shared by its requests.
type budget struct {
	mu   sync.Mutex
	left int64
}

// remaining is what the fetch may still keep.
func (b *budget) remaining() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left
}

func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

func (c *Client) queryRange(ctx context.Context, query string, start, end time.Time, step time.Duration, bud *budget) ([]*ingest.PromResult, error) {
	if step <= 0 || step%time.Second != 0 {
		return nil, fmt.Errorf("prometheus: step %v: must be a whole number of seconds", step)
	}
	if end.Before(start) {
		return nil, fmt.Errorf("prometheus: range end %s is before start %s", end, start)
	}
	chunks := Chunks(start, end, step, c.cfg.MaxPoints)
	answers := make([][]*ingest.PromResult, len(chunks))
	errs := make([]error, len(chunks))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, ch := range chunks {
		wg.Go(func() {
			select {
			case c.sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-c.sem }()
			res, err := c.queryRangeOnce(ctx, query, ch[0], ch[1], step, bud)
			if err != nil {
				errs[i] = fmt.Errorf("query %q from %s to %s: %w", query,
					ch[0].UTC().Format(time.RFC3339), ch[1].UTC().Format(time.RFC3339), err)
				cancel() // the others cannot help any more
				return
			}
			answers[i] = res
		})
	}
	wg.Wait()
	// The first chunk's own error, not a cancellation it caused in the others.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	byKey := map[string]*ingest.PromResult{}
	for _, res := range answers {
		for _, s := range res {
			k := ingest.PromLabels(s.Labels)
			m := byKey[k]
			if m == nil {
				byKey[k] = s
				continue
			}
			m.Points = append(m.Points, s.Points...)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*ingest.PromResult, 0, len(keys))
	for _, k := range keys {
		s := byKey[k]
		sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].T < s.Points[j].T })
		dedup := s.Points[:0]
		for i, p := range s.Points {
			if i > 0 && p.T == dedup[len(dedup)-1].T {
				continue
			}
			dedup = append(dedup, p)
		}
		s.Points = dedup
		out = append(out, s)
	}
	return out, nil
}

// queryRangeOnce runs one request, retrying what may succeed on a retry.
func (c *Client) queryRangeOnce(ctx context.Context, query string, start, end time.Time, step time.Duration, bud *budget) ([]*ingest.PromResult, error) {
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
		res, err := c.get(ctx, u.String(), bud)
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

func (c *Client) get(ctx context.Context, u string, bud *budget) ([]*ingest.PromResult, error) {
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
	// The body is decoded as it arrives; a prefix is kept for messages about
	// an answer that is not Prometheus JSON.
	head := &prefix{max: 512}
	body := io.TeeReader(resp.Body, head)
	var results []*ingest.PromResult
	// The budget bounds the decoding itself, point by point: a server that
	// streams one endless series is stopped at --max-samples, not after it.
	ans, derr := ingest.DecodePromMatrix(body, "answer", ingest.PromDecodeOptions{MaxPoints: max(bud.remaining(), 1)}, func(r *ingest.PromResult) error {
		if !bud.take(int64(len(r.Points))) {
			return fmt.Errorf("more than --max-samples %d points kept for this fetch: narrow the query or the period, or raise --max-samples: %w",
				c.cfg.MaxSamples, ingest.ErrTooLarge)
		}
		r.Line = 0 // a live answer has no lines worth naming
		results = append(results, r)
		return nil
	})
	if errors.Is(derr, ingest.ErrTooLarge) {
		var re *ingest.ReadError
		if errors.As(derr, &re) {
			derr = fmt.Errorf("more than --max-samples %d points kept for this fetch: narrow the query or the period, or raise --max-samples: %w",
				c.cfg.MaxSamples, ingest.ErrTooLarge)
		}
		return nil, &APIError{Status: resp.StatusCode, ErrorType: "client", Message: derr.Error(), Err: ingest.ErrTooLarge}
	}
	// A body cut or stalled mid-answer (the --timeout reached while it
	// streamed, the connection dropped) is a network error, retried as the
	// docs say; only a complete answer with values billing cannot take is
	// bad data.
	var ne net.Error
	if derr != nil && (errors.As(derr, &ne) || errors.Is(derr, io.ErrUnexpectedEOF) || errors.Is(derr, context.DeadlineExceeded)) {
		if ne != nil && ne.Timeout() || errors.Is(derr, context.DeadlineExceeded) {
			return nil, fmt.Errorf("the answer stopped before its end within --timeout %v: %w", c.cfg.Timeout, derr)
		}
		return nil, fmt.Errorf("the answer was cut before its end: %w", derr)
	}
	if resp.StatusCode != http.StatusOK || ans.Status != "success" {
		if ans.Status == "error" {
			return nil, &APIError{Status: resp.StatusCode, ErrorType: ans.ErrorType, Message: ans.Error}
		}
		io.Copy(head, io.LimitReader(resp.Body, 512))
		msg := strings.TrimSpace(head.String())
		if resp.StatusCode == http.StatusOK {
			return nil, &APIError{Status: resp.StatusCode, ErrorType: "bad_response", Message: "not a Prometheus API answer: " + msg}
		}
		return nil, &APIError{Status: resp.StatusCode, Message: msg}
	}
	if derr != nil {
		var re *ingest.ReadError
		if errors.As(derr, &re) {
			// A value the billing cannot take (negative, infinite,
			// impossible) is the query's fault: bad data, not a server fault.
			return nil, &APIError{Status: resp.StatusCode, ErrorType: "bad_data", Message: re.Error()}
		}
		return nil, fmt.Errorf("reading the answer: %w", derr)
	}
	if ans.ResultType != "matrix" {
		return nil, &APIError{Status: resp.StatusCode, ErrorType: "bad_response",
			Message: fmt.Sprintf("resultType %q, want matrix", ans.ResultType)}
	}
	return results, nil
}

// prefix keeps the first max bytes written to it.
type prefix struct {
	max int
	b   []byte
}

func (p *prefix) Write(b []byte) (int, error) {
	if n := p.max - len(p.b); n > 0 {
		p.b = append(p.b, b[:min(n, len(b))]...)
	}
	return len(b), nil
}

func (p *prefix) String() string {
	s := string(p.b)
	if len(p.b) >= p.max {
		s += "…"
	}
	return s
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
