package exporter

import (
	"compress/gzip"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// textContentType is the text exposition format's media type; the escaping
// parameter (how names outside [a-zA-Z0-9_:] would be escaped; every
// linecheck name is plain) is appended per request.
const textContentType = "text/plain; version=0.0.4; charset=utf-8"

// handlerErrors counts what went wrong while serving /metrics, by cause
// ("encoding": writing the response failed; "gathering" cannot happen, the
// metrics are read from memory, and stays 0). The name is the one
// Prometheus's Go client used, so dashboards and alerts on it still work.
const handlerErrors = "promhttp_metric_handler_errors_total"

// metricsHandler serves r in the text format, gzipped when the client asks
// for it, with only the families named by name[] query parameters when
// there are any.
type metricsHandler struct {
	r    *Registry
	errs CounterVec
}

func newMetricsHandler(r *Registry) *metricsHandler {
	h := &metricsHandler{r: r, errs: r.NewCounterVec(handlerErrors, "Total number of internal errors encountered by the promhttp metric handler.", "cause")}
	h.errs.WithLabelValues("gathering")
	h.errs.WithLabelValues("encoding")
	return h
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var filter map[string]bool
	if req.URL != nil {
		if names := req.URL.Query()["name[]"]; len(names) > 0 {
			filter = map[string]bool{}
			for _, n := range names {
				filter[n] = true
			}
		}
	}
	fams := h.r.render(filter)
	w.Header().Add("Vary", "Accept")
	w.Header().Add("Vary", "Accept-Encoding")
	w.Header().Set("Content-Type", textContentType+"; escaping="+escapingOf(req.Header.Get("Accept")))
	out := http.ResponseWriter(w)
	var zw *gzip.Writer
	if contentEncoding(req.Header["Accept-Encoding"]) == "gzip" {
		w.Header().Set("Content-Encoding", "gzip")
		zw = gzipWriters.Get().(*gzip.Writer)
		zw.Reset(w)
		defer func() { zw.Close(); gzipWriters.Put(zw) }()
	}
	for _, f := range fams {
		var err error
		if zw != nil {
			_, err = zw.Write(f.text)
		} else {
			_, err = out.Write(f.text)
		}
		if err != nil {
			// Most likely the scraper went away: nothing more can be
			// told to it, so count the failure and stop.
			h.errs.WithLabelValues("encoding").Inc()
			return
		}
	}
}

// contentEncoding picks gzip or identity from Accept-Encoding header values
// the way Prometheus's Go client did: of the offers identity and gzip, in
// that order, the one with the highest q ("*" matches either, so it means
// identity); no header or an unknown coding means identity, and q=0 too.
func contentEncoding(values []string) string {
	best, bestQ := "identity", -1.0
	specs := parseEncodings(values)
	for _, offer := range []string{"identity", "gzip"} {
		for _, s := range specs {
			if s.q > bestQ && (s.value == "*" || s.value == offer) {
				best, bestQ = offer, s.q
			}
		}
	}
	if bestQ == 0 {
		return "identity"
	}
	return best
}

type encodingSpec struct {
	value string
	q     float64
}

// parseEncodings reads "coding[;q=x], …" lists; a malformed element ends
// its header line (what follows it is ignored).
func parseEncodings(values []string) []encodingSpec {
	var out []encodingSpec
	for _, s := range values {
		for {
			i := 0
			for i < len(s) && (isTokenByte(s[i]) || s[i] == '/') {
				i++
			}
			if i == 0 {
				break
			}
			spec := encodingSpec{value: s[:i], q: 1}
			s = trimHTTPSpace(s[i:])
			if strings.HasPrefix(s, ";") {
				s = trimHTTPSpace(s[1:])
				if !strings.HasPrefix(s, "q=") {
					break
				}
				spec.q, s = parseQ(s[2:])
				if spec.q < 0 {
					break
				}
			}
			out = append(out, spec)
			s = trimHTTPSpace(s)
			if !strings.HasPrefix(s, ",") {
				break
			}
			s = trimHTTPSpace(s[1:])
		}
	}
	return out
}

// parseQ reads a quality value (0, 1, 0.xyz, 1.000); -1 when there is none.
func parseQ(s string) (float64, string) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return -1, ""
	}
	q := float64(s[0] - '0')
	s = s[1:]
	if !strings.HasPrefix(s, ".") {
		return q, s
	}
	s = s[1:]
	n, d, i := 0, 1, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		d *= 10
	}
	return q + float64(n)/float64(d), s[i:]
}

func isTokenByte(c byte) bool {
	return c > 31 && c < 127 && !strings.ContainsRune(" \t\"(),/:;<=>?@[]\\{}", rune(c))
}

func trimHTTPSpace(s string) string {
	return strings.TrimLeft(s, " \t\r\n")
}

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, sub string
	q        float64
	params   map[string]string
}

// escapingOf is the escaping parameter of the response's Content-Type: the
// client's own when its Accept header names a known scheme, before or on
// the clause that selects the text format, otherwise "underscores" (the
// answer of Prometheus's Go client, which this follows clause by clause).
func escapingOf(accept string) string {
	esc := "underscores"
	for _, m := range parseAccept(accept) {
		switch e := m.params["escaping"]; e {
		case "allow-utf-8", "underscores", "dots", "values":
			esc = e
		}
		v := m.params["version"]
		if v == "" && m.typ == "text" && m.sub == "plain" {
			v = "0.0.4"
		}
		if (m.typ == "*" || m.typ == "text") && (m.sub == "*" || m.sub == "plain") && v == "0.0.4" {
			return esc
		}
	}
	return esc
}

// parseAccept splits an Accept header into media ranges, ordered by q
// (highest first) and, at equal q, specific types before wildcards.
func parseAccept(h string) []mediaRange {
	var out []mediaRange
	for _, part := range strings.Split(h, ",") {
		if part == "" {
			continue
		}
		part = strings.Trim(part, " ")
		typ, rest, _ := strings.Cut(part, ";")
		main, sub, hasSlash := strings.Cut(typ, "/")
		m := mediaRange{typ: strings.Trim(main, " "), q: 1}
		switch {
		case !hasSlash:
			if m.typ != "*" {
				continue
			}
			m.sub = "*"
		case strings.Contains(sub, "/"):
			continue
		default:
			m.sub = strings.Trim(sub, " ")
		}
		if rest != "" {
			m.params = map[string]string{}
			for _, p := range strings.Split(rest, ";") {
				k, v, ok := strings.Cut(p, "=")
				if !ok || strings.Contains(v, "=") {
					continue
				}
				k = strings.Trim(k, " ")
				if k == "q" {
					m.q, _ = strconv.ParseFloat(v, 32) // a malformed q is 0
					continue
				}
				m.params[k] = strings.Trim(v, " ")
			}
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.q > b.q || (a.typ != "*" && b.typ == "*") || (a.sub != "*" && b.sub == "*")
	})
	return out
}
