// Package vantagefetch downloads a public measurement's results from a
// measurement network (RIPE Atlas, Globalping) into a file, for
// `linecheck vantage fetch`: one GET through the platform's documented API,
// bounded in time, size and redirects, checked to be a result linecheck's
// readers accept, and written whole or not at all (internal/atomicfile).
//
// It is the only place linecheck talks to these platforms, and only when the
// user asks: compare, trace --replay and the TUI read the files it writes
// and never go to the network for them.
package vantagefetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/atomicfile"
	"github.com/linecheck/linecheck/internal/readlimit"
)

// Platform is a measurement network whose results can be fetched.
type Platform struct {
	// Name is the command's word for it: "atlas", "globalping".
	Name string
	// Title names it in messages.
	Title string
	// BaseURL is the API's scheme and host; Env the environment variable
	// that replaces it (for a mirror, or a local server in tests).
	BaseURL string
	Env     string
	// path is the results' path and query for a measurement id.
	path func(id string) string
	// id is the form of a measurement id, idWant its wording.
	id     *regexp.Regexp
	idWant string
	// check says whether the answer is a finished result the readers
	// accept.
	check func(data []byte, name string) error
}

// Platforms are the networks fetch knows, in the order help lists them.
var Platforms = []Platform{
	{
		Name:    "atlas",
		Title:   "RIPE Atlas",
		BaseURL: "https://atlas.ripe.net",
		Env:     "LINECHECK_ATLAS_URL",
		// GET /api/v2/measurements/{msm}/results/ (the REST API reference):
		// the list of every probe's results, as JSON.
		path:   func(id string) string { return "/api/v2/measurements/" + id + "/results/?format=json" },
		id:     regexp.MustCompile(`^[1-9][0-9]{0,11}$`),
		idWant: "a RIPE Atlas measurement id is a number (msm_id, such as 1033154)",
		check:  checkAtlas,
	},
	{
		Name:    "globalping",
		Title:   "Globalping",
		BaseURL: "https://api.globalping.io",
		Env:     "LINECHECK_GLOBALPING_URL",
		// GET /v1/measurements/{id}: the measurement with every probe's
		// result.
		path:   func(id string) string { return "/v1/measurements/" + id },
		id:     regexp.MustCompile(`^[A-Za-z0-9]{1,64}$`),
		idWant: "a Globalping measurement id is letters and digits (such as ZE5IQWjONEjUq6E8)",
		check:  checkGlobalping,
	},
}

// PlatformNames lists the platforms' names: "atlas, globalping".
func PlatformNames() string {
	var n []string
	for _, p := range Platforms {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// Defaults of Options.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultMaxBytes     = readlimit.Document
	DefaultMaxRedirects = 5
)

// Options say where and how to fetch.
type Options struct {
	// BaseURL replaces the platform's (scheme and host, optionally a
	// path prefix); "" uses the platform's Env variable, else BaseURL.
	BaseURL string
	// Getenv reads the environment (default: none is read).
	Getenv func(string) string
	// Timeout bounds the whole download (default DefaultTimeout).
	Timeout time.Duration
	// MaxBytes bounds the answer's body (default DefaultMaxBytes, the
	// limit linecheck's readers read a recorded file up to).
	MaxBytes int64
	// MaxRedirects bounds the redirects followed (default
	// DefaultMaxRedirects).
	MaxRedirects int
	// Transport does the requests (default http.DefaultTransport).
	Transport http.RoundTripper
	// UserAgent is sent with the request.
	UserAgent string
}

// ErrBadInput is wrapped by errors the user fixes in the command line (an
// unknown platform, a malformed id or base URL).
var ErrBadInput = errors.New("bad input")

// inputError is an ErrBadInput whose message says only what is wrong.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

func badInputf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// Result says what Fetch wrote.
type Result struct {
	URL   string
	Path  string
	Bytes int
}

// PlatformOf is the platform named name.
func PlatformOf(name string) (Platform, error) {
	for _, p := range Platforms {
		if p.Name == name {
			return p, nil
		}
	}
	return Platform{}, badInputf("%q is not a platform linecheck fetches from (%s)", name, PlatformNames())
}

// URL is where the results of measurement id are fetched from.
func (p Platform) URL(id string, o Options) (string, error) {
	if !p.id.MatchString(id) {
		return "", badInputf("%q: %s", id, p.idWant)
	}
	base, from := o.BaseURL, "--base-url"
	if base == "" && o.Getenv != nil {
		base, from = o.Getenv(p.Env), p.Env
	}
	if base == "" {
		base, from = p.BaseURL, ""
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", badInputf("%s %q: want http:// or https:// with a host and no query", from, base)
	}
	return strings.TrimRight(base, "/") + p.path(id), nil
}

// Fetch downloads the results of measurement id from platform p and writes
// them to path, replacing it only when the whole answer came, within the
// bounds of o, and reads as p's results. On any failure path is left as it
// was (absent, or the previous file) and the error says why.
func Fetch(ctx context.Context, p Platform, id, path string, o Options) (Result, error) {
	u, err := p.URL(id, o)
	if err != nil {
		return Result{}, err
	}
	if err := atomicfile.Check(path); err != nil {
		return Result{}, badInputf("-o %s: %v", path, err)
	}
	data, err := get(ctx, u, o)
	if err != nil {
		return Result{}, err
	}
	if err := p.check(data, u); err != nil {
		return Result{}, fmt.Errorf("%s measurement %s: %w; nothing written", p.Title, id, err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return Result{}, err
	}
	return Result{URL: u, Path: path, Bytes: len(data)}, nil
}

// get is one bounded GET of u: the body whole, or an error that names u
// and what went wrong.
func get(ctx context.Context, u string, o Options) ([]byte, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tooMany := fmt.Errorf("more than %d redirects (a redirect loop?)", o.MaxRedirects)
	client := &http.Client{
		Transport: o.Transport,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > o.MaxRedirects {
				return tooMany
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, badInputf("%s: %v", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if o.UserAgent != "" {
		req.Header.Set("User-Agent", o.UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, netError(ctx, u, o.Timeout, err, tooMany)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		msg := fmt.Sprintf("%s: HTTP %s", u, resp.Status)
		if s := firstLine(snippet); s != "" {
			msg += ": " + s
		}
		if resp.StatusCode == http.StatusNotFound {
			msg += " (no such measurement, or not public?)"
		}
		return nil, errors.New(msg)
	}
	if resp.ContentLength > o.MaxBytes {
		return nil, tooLarge(u, o.MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, o.MaxBytes+1))
	if err != nil {
		return nil, netError(ctx, u, o.Timeout, err, tooMany)
	}
	if int64(len(data)) > o.MaxBytes {
		return nil, tooLarge(u, o.MaxBytes)
	}
	return data, nil
}

// netError words a failed request or body read: the timeout, the redirect
// bound, an answer cut short, or the network's own error.
func netError(ctx context.Context, u string, timeout time.Duration, err, tooMany error) error {
	switch {
	case errors.Is(err, tooMany):
		return fmt.Errorf("%s: %w; nothing written", u, tooMany)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: no complete answer within %v (the network or the server is slow; --timeout sets the bound); nothing written", u, timeout)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: the answer was cut short (the connection closed before its end); nothing written", u)
	}
	return fmt.Errorf("%s: network error: %w; nothing written", u, err)
}

func tooLarge(u string, limit int64) error {
	size := fmt.Sprintf("%d MiB", limit>>20)
	if limit%(1<<20) != 0 {
		size = fmt.Sprintf("%d KiB", limit>>10)
	}
	return fmt.Errorf("%s: the answer is larger than %s (--max-size); nothing written", u, size)
}

// firstLine is the first line of an error body, trimmed, at most 200
// characters, for the message.
func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "?"))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
