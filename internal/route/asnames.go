package route

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/asn"
)

// Where a hop's AS answer came from (Responder.ASSource), in the order they
// are asked: the operator's --prefix-table, the bundled carrier table
// (line-class ranges), the --asn-db file, the bundled or updated dataset
// (package asn); "recording" is an ASN the recording carried (mtr -z) that no
// source knew. Addresses in special ranges are never looked up: their
// ASSource is the range's kind (private, cgnat, dod, loopback, link-local,
// documentation, benchmarking, multicast, reserved). "none": public, and no
// source knows it.
const (
	SourcePrefixTable  = "prefix-table"
	SourceCarrierTable = "carrier-table"
	SourceASNDB        = "asn-db"
	SourceDataset      = "dataset"
	SourceRecording    = "recording"
	SourceNone         = "none"
)

// Names is the chain of sources a hop is named from: the operator's prefix
// table (--prefix-table) ahead of the bundled carrier table, then, as AS
// sources, the user's --asn-db file and the dataset. It is an ASNDB, so
// classification asks the same sources in the same order as the hop
// annotation; the operator's table travels with it as a value.
type Names struct {
	// Table is the operator's prefix table (nil without --prefix-table):
	// consulted first, and ahead of the private/reserved exclusion.
	Table *PrefixTable
	// File is the --asn-db database (nil without one).
	File ASNDB
	// Dataset is the offline IP-to-AS table (nil with --no-asn).
	Dataset *asn.Table
	// Origin is "bundled" or "cache": which copy Dataset is.
	Origin string
	// Off (--no-asn) makes Annotate leave the AS fields and the AS path
	// out of the document (ClearASN); the line class is still decided.
	Off bool
}

// NewNames chains file (may be nil) and the dataset lookups use
// (asn.Default: the updated copy in the cache when newer, else the bundled
// one), opening it now; with dataset false (--no-asn) the file alone.
// The note says why a cached copy was passed over ("" when none was).
func NewNames(file ASNDB, dataset bool) (*Names, string, error) {
	n := &Names{File: file}
	if !dataset {
		n.Off = true
		return n, "", nil
	}
	ch, err := asn.Default()
	if err != nil {
		return nil, "", err
	}
	n.Dataset, n.Origin = ch.Table, ch.Origin
	return n, ch.Note, nil
}

// Lookup is the first answer of File, then Dataset.
func (n *Names) Lookup(ip netip.Addr) (int, string, bool) {
	a, name, _, ok := n.lookup(ip)
	return a, name, ok
}

func (n *Names) lookup(ip netip.Addr) (asnum int, name, source string, ok bool) {
	if n == nil {
		return 0, "", "", false
	}
	if n.File != nil {
		if a, nm, ok := n.File.Lookup(ip); ok {
			return a, nm, SourceASNDB, true
		}
	}
	if n.Dataset != nil {
		if inf, ok := n.Dataset.Lookup(ip); ok {
			return int(inf.ASN), inf.Name, SourceDataset, true
		}
	}
	return 0, "", "", false
}

// dataset is the table behind db, when db is a Names with one.
func dataset(db ASNDB) *asn.Table {
	if n, ok := db.(*Names); ok && n != nil {
		return n.Dataset
	}
	return nil
}

// ASNData is what a JSON document that used the dataset says about it.
type ASNData struct {
	// Snapshot is the dataset's date (YYYY-MM-DD).
	Snapshot string `json:"snapshot"`
	// Origin is "bundled" or "cache" (a copy `linecheck asn update` fetched).
	Origin      string `json:"origin"`
	Source      string `json:"source"`
	Attribution string `json:"attribution"`
}

// DataInfo describes db's dataset for a document; nil when db has none
// (--no-asn).
func DataInfo(db ASNDB) *ASNData {
	n, ok := db.(*Names)
	if !ok || n == nil || n.Dataset == nil {
		return nil
	}
	return &ASNData{Snapshot: n.Dataset.SnapshotDate(), Origin: n.Origin, Source: n.Dataset.Source, Attribution: asn.Attribution}
}

// ASHop is one network of an AS path: where it begins (the lowest TTL of its
// run of hops) and what it is.
type ASHop struct {
	TTL     int    `json:"ttl"`
	ASN     int    `json:"asn"`
	Name    string `json:"name"`
	Country string `json:"country,omitempty"`
}

// ASPath is the chain of networks a trace crosses: per TTL the first
// responder with an ASN; consecutive hops of one ASN make one entry, which
// begins at the first of them. Hops without an ASN (silent, private, not
// known) neither start nor end an entry. Name is the carrier name the hop
// got (a carrier table's short name, or the AS name).
func ASPath(t *Trace) []ASHop {
	if t == nil {
		return nil
	}
	var out []ASHop
	for _, h := range t.Hops {
		for _, r := range h.Responders {
			if r.ASN <= 0 {
				continue
			}
			if len(out) == 0 || out[len(out)-1].ASN != r.ASN {
				name := r.Carrier
				if name == "" {
					name = r.ASName
				}
				out = append(out, ASHop{TTL: h.TTL, ASN: r.ASN, Name: name, Country: r.Country})
			}
			break
		}
	}
	return out
}

// ASPathText writes an AS path in one line: "AS4134 ChinaNet (ttl 3) →
// AS4809 CN2 (ttl 6)"; "" for an empty path.
func ASPathText(p []ASHop) string {
	var b strings.Builder
	for i, h := range p {
		if i > 0 {
			b.WriteString(" → ")
		}
		b.WriteString("AS" + strconv.Itoa(h.ASN))
		if h.Name != "" && h.Name != "AS"+strconv.Itoa(h.ASN) {
			b.WriteString(" " + ShortName(h.Name))
		}
		b.WriteString(" (ttl " + strconv.Itoa(h.TTL) + ")")
	}
	return b.String()
}

// ShortName cuts a registry's network name to 24 characters for tables
// (the JSON keeps it whole).
func ShortName(s string) string {
	r := []rune(s)
	if len(r) <= 24 {
		return s
	}
	return strings.TrimSpace(string(r[:23])) + "…"
}

// ClearASN removes the AS annotation of every responder and the document's
// AS path and dataset note (--no-asn); the line class stays.
func ClearASN(t *Trace) {
	if t == nil {
		return
	}
	for i := range t.Hops {
		for j := range t.Hops[i].Responders {
			r := &t.Hops[i].Responders[j]
			r.ASN, r.ASName, r.Country, r.ASSource = 0, "", "", ""
		}
	}
	t.ASPath, t.ASNData = nil, nil
}

// LoadHopNames is the chain of sources every command that names hops uses:
// the operator's --prefix-table (table may be nil), the --asn-db file (path
// may be ""), then the offline dataset (the updated copy from `linecheck asn
// update` when newer, else the bundled snapshot) unless noASN (--no-asn).
// The note says why a cached copy was passed over ("" when none was).
func LoadHopNames(path string, noASN bool, table *PrefixTable) (ASNDB, string, error) {
	var file ASNDB
	if path != "" {
		d, err := LoadASNDB(path)
		if err != nil {
			return nil, "", err
		}
		file = d
	}
	n, note, err := NewNames(file, !noASN)
	if err != nil {
		return nil, "", err
	}
	n.Table = table
	return n, note, nil
}
