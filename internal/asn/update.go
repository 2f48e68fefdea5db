package asn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/asn/data"
	"github.com/linecheck/linecheck/internal/atomicfile"
)

// DefaultURLs are the source's published files (the jsDelivr mirror of the
// npm packages' latest version): the AS ranges and the registries'
// countries, IPv4 and IPv6.
var DefaultURLs = []string{
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv4.csv",
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv6.csv",
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn-country/asn-country-ipv4.csv",
	"https://cdn.jsdelivr.net/npm/@ip-location-db/asn-country/asn-country-ipv6.csv",
}

// MaxDownload bounds one downloaded file (the largest source file is about
// 24 MB).
const MaxDownload = 256 << 20

// UpdateOptions say where Update downloads from and writes to.
type UpdateOptions struct {
	// URLs are the CSV files to build the table of (plain or gzip); each
	// holds AS rows or country rows, of either family. Default DefaultURLs.
	URLs []string
	// Dir is the cache directory (default CacheDir()).
	Dir string
	// Client does the downloads (default: http.Client with Timeout).
	Client *http.Client
	// Timeout bounds the whole download (default 5 minutes).
	Timeout time.Duration
	// Now is the snapshot time of files whose server gives no
	// Last-Modified (default time.Now).
	Now func() time.Time
	// Progress, when set, is told about each file as it arrives.
	Progress func(msg string)
	// MinRanges is the fewest AS ranges (IPv4 and IPv6 together) a download
	// must hold; 0 means as many as the bundled snapshot.
	MinRanges int
}

// UpdateResult says what Update did.
type UpdateResult struct {
	Path  string
	Table *Table
	// Bytes is the size of the file written.
	Bytes int
	// Used is false when the new copy is not newer than the bundled
	// snapshot: lookups keep the bundled one then.
	Used bool
}

// Update downloads the source files, builds a table of them, checks that it
// parses whole and covers at least as many ranges as the bundled snapshot,
// and only then replaces the cached copy in one rename
// (internal/atomicfile). On any failure (HTTP error, a file cut short,
// content that is not the source's CSV, a timeout, a full disk) the old copy
// stays as it was and the error says why.
func Update(ctx context.Context, o UpdateOptions) (*UpdateResult, error) {
	if len(o.URLs) == 0 {
		o.URLs = DefaultURLs
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dir == "" {
		d, err := CacheDir()
		if err != nil {
			return nil, err
		}
		o.Dir = d
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var b Builder
	var snap time.Time
	var names []string
	for _, u := range o.URLs {
		name, mod, err := fetchInto(ctx, o.Client, u, &b)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%s: no complete download within %v: %w", u, o.Timeout, err)
			}
			return nil, err
		}
		if mod.IsZero() {
			mod = o.Now()
		}
		if mod.After(snap) {
			snap = mod
		}
		names = append(names, name)
		if o.Progress != nil {
			o.Progress("read " + u)
		}
	}
	t, err := b.Table(snap, "downloaded "+strings.Join(names, ", "))
	if err != nil {
		return nil, err
	}
	v4, v6 := t.Ranges()
	if o.MinRanges == 0 {
		o.MinRanges = data.Ranges4 + data.Ranges6
	}
	if v4+v6 < o.MinRanges {
		return nil, fmt.Errorf("the download holds %d IPv4 + %d IPv6 AS ranges, fewer than the %d of the bundled snapshot (%d + %d): "+
			"not used (give both the IPv4 and the IPv6 AS file, or check the URL)", v4, v6, o.MinRanges, data.Ranges4, data.Ranges6)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, t); err != nil {
		return nil, err
	}
	if _, err := Decode(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("the new table does not read back: %w", err)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	p := filepath.Join(o.Dir, CacheFile)
	if err := atomicfile.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("writing %s: %w (the previous copy is kept)", p, err)
	}
	return &UpdateResult{Path: p, Table: t, Bytes: buf.Len(), Used: t.SnapshotDate() > data.Snapshot}, nil
}

// fetchInto downloads one file and adds its rows to b; it returns the
// file's name (for the table's source) and its Last-Modified time.
func fetchInto(ctx context.Context, c *http.Client, u string, b *Builder) (string, time.Time, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		return "", time.Time{}, fmt.Errorf("%q is not an http(s) URL", u)
	}
	name := path.Base(pu.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", time.Time{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", time.Time{}, fmt.Errorf("%s: HTTP %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDownload+1))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s: download cut short after %d bytes: %w", u, len(body), err)
	}
	if len(body) > MaxDownload {
		return "", time.Time{}, fmt.Errorf("%s: larger than %d MiB: not an ASN CSV file", u, MaxDownload>>20)
	}
	if resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
		return "", time.Time{}, fmt.Errorf("%s: got %d of %d bytes: download cut short", u, len(body), resp.ContentLength)
	}
	var r io.Reader = bytes.NewReader(body)
	if len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("%s: %w", u, err)
		}
		r = bufio.NewReader(zr)
	}
	if err := b.AddCSV(name, r); err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %w", u, err)
	}
	mod, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return name, mod.UTC(), nil
}
