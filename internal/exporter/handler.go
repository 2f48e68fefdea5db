package exporter

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// WriteTo writes what a plain scrape of /metrics answers (no Accept header:
// the text format 0.0.4, uncompressed), through r's own handler, so that
// tests and tools read exactly what Prometheus reads.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	rec := &recorder{w: w, h: http.Header{}}
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/metrics"}, Header: http.Header{}}
	r.Handler().ServeHTTP(rec, req)
	if rec.err != nil {
		return rec.n, rec.err
	}
	if rec.code != 0 && rec.code != http.StatusOK {
		return rec.n, fmt.Errorf("exporter: /metrics answered %d: %s", rec.code, bytes.TrimSpace(rec.body.Bytes()))
	}
	return rec.n, nil
}

// recorder is the http.ResponseWriter of WriteTo: the body goes to w, but
// an error page is kept for the error.
type recorder struct {
	w    io.Writer
	h    http.Header
	code int
	n    int64
	err  error
	body bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if r.code != http.StatusOK {
		return r.body.Write(p)
	}
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.w.Write(p)
	r.n += int64(n)
	r.err = err
	return n, err
}
