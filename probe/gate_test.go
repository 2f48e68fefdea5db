package probe

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The documentation ranges are RFC 5737's three /24s and RFC 3849's /32.
func TestDocumentationPrefix(t *testing.T) {
	cases := map[string]string{
		"192.0.2.1": "192.0.2.0/24", "198.51.100.255": "198.51.100.0/24", "203.0.113.10": "203.0.113.0/24",
		"::ffff:203.0.113.10": "203.0.113.0/24", "2001:db8::1": "2001:db8::/32", "2001:db8:ffff::9": "2001:db8::/32",
		"192.0.3.1": "", "198.51.101.1": "", "203.0.114.1": "", "2001:db9::1": "", "127.0.0.1": "", "10.0.0.1": "",
		"192.0.1.255": "", "2001:db7:ffff::1": "",
	}
	for ip, want := range cases {
		p, ok := documentationPrefix(netip.MustParseAddr(ip))
		if ok != (want != "") || (ok && p.String() != want) {
			t.Errorf("%s: %v %v, want %q", ip, p, ok, want)
		}
	}
}

// The gate's refusals: what each refuses, the sentinel it wraps, and that
// the sentence names the target as written and, when it differs, the address.
func TestCheckTargetRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		doc        bool
		want       string // "" = accepted
	}{
		{"192.0.2.1", "192.0.2.1", true, "192.0.2.1 is a documentation address (192.0.2.0/24), illustrative only: linecheck never probes it"},
		{"doc.test", "203.0.113.7", true, "doc.test (203.0.113.7) is a documentation address (203.0.113.0/24)"},
		{"::ffff:198.51.100.3", "::ffff:198.51.100.3", true, "::ffff:198.51.100.3 (198.51.100.3) is a documentation address (198.51.100.0/24)"},
		{"2001:db8::7", "2001:db8::7", true, "2001:db8::7 is a documentation address (2001:db8::/32)"},
		{"224.0.0.1", "224.0.0.1", false, `target "224.0.0.1" is a broadcast or multicast address: H`},
		{"mc.test", "ff02::1", false, `target "mc.test" (ff02::1) is a broadcast or multicast address: H`},
		{"255.255.255.255", "255.255.255.255", false, "is a broadcast or multicast address: H"},
		{"127.255.255.255", "127.255.255.255", false, "is a broadcast or multicast address: H"},
		{"0.0.0.0", "0.0.0.0", false, `target "0.0.0.0" is not a unicast address`},
		{"::", "::", false, "is not a unicast address"},
		{"127.0.0.1", "127.0.0.1", false, ""},
		{"::1", "::1", false, ""},
		{"192.0.3.1", "192.0.3.1", false, ""},
	} {
		err := CheckTarget(tc.name, netip.MustParseAddr(tc.addr), "H")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		if !errors.Is(err, ErrRefused) || errors.Is(err, ErrDocumentation) != tc.doc {
			t.Errorf("%s: ErrRefused %v, ErrDocumentation %v (want %v)", tc.name, errors.Is(err, ErrRefused), errors.Is(err, ErrDocumentation), tc.doc)
		}
	}
}

// --allow-broadcast lifts the broadcast and multicast guards, never the
// documentation one.
func TestAllowBroadcastNeverLiftsDocumentation(t *testing.T) {
	if _, err := ResolveTargets(context.Background(), []string{"224.0.0.1"}, ExpandOptions{AllowBroadcast: true}); err != nil {
		t.Fatalf("multicast with the flag: %v", err)
	}
	for _, a := range []string{"192.0.2.1", "198.51.100.0/30", "2001:db8::/126"} {
		_, err := ResolveTargets(context.Background(), []string{a}, ExpandOptions{AllowBroadcast: true, AllowLarge: true})
		if !errors.Is(err, ErrDocumentation) {
			t.Errorf("%s with --allow-broadcast: %v, want ErrDocumentation", a, err)
		}
	}
	// A name resolving to one is refused by its name and address; the lookup
	// is injected, nothing is resolved or sent.
	lookup := func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("2001:db8::5"), netip.MustParseAddr("203.0.113.5")}, nil
	}
	_, err := ResolveTargets(context.Background(), []string{"doc.test"}, ExpandOptions{Lookup: lookup})
	if !errors.Is(err, ErrDocumentation) || !strings.Contains(err.Error(), "doc.test (203.0.113.5) is a documentation address") {
		t.Errorf("doc.test: %v, want its IPv4 address refused by name", err)
	}
	var re *ResolveError
	_, err = ResolveTargets(context.Background(), []string{"none.test"}, ExpandOptions{Lookup: func(context.Context, string, string) ([]netip.Addr, error) { return nil, nil }})
	if !errors.As(err, &re) || re.Name != "none.test" || err.Error() != `target "none.test": no address` {
		t.Errorf("no address: %v", err)
	}
}

// PingTargets and Sweep take targets already resolved (compare, serve): the
// gate refuses there before a socket opens. Sweep refuses the gated target
// alone; the others are probed (here they fail at the injected socket, so
// nothing is sent anywhere).
func TestPingAndSweepGateBeforeAnySocket(t *testing.T) {
	opened := 0
	refuse := func(int, int, int) (int, error) { opened++; return -1, unix.EPERM }
	doc := Target{Name: "doc", Addr: netip.MustParseAddr("198.51.100.9")}
	lo := Target{Name: "lo", Addr: netip.MustParseAddr("127.0.0.1")}
	_, err := PingTargets(context.Background(), []Target{lo, doc}, PingConfig{Count: 1, OpenSocket: refuse, AllowBroadcast: true}, nil)
	if !errors.Is(err, ErrDocumentation) || opened != 0 {
		t.Fatalf("PingTargets: %v, %d sockets opened; want ErrDocumentation and none", err, opened)
	}
	res, err := Sweep(context.Background(), []SweepTarget{{Target: lo}, {Target: doc}}, PingConfig{Count: 1, OpenSocket: refuse}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[1].Err, ErrDocumentation) || res[1].Target != "doc" || res[1].Sent != 0 {
		t.Errorf("the documentation target: %+v, want its refusal", res[1])
	}
	if !errors.Is(res[0].Err, ErrPrivilege) || opened == 0 {
		t.Errorf("the loopback target: %+v (%d sockets opened), want it probed and failing at the socket", res[0], opened)
	}
}

// moduleRoot is the directory holding go.mod, above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod above probe: %v", err)
	}
	return dir
}

// goFiles parses every production .go file under dir (tests left out).
func goFiles(t *testing.T, dir string, mode parser.Mode) map[string]*ast.File {
	t.Helper()
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, mode)
		if err != nil {
			return err
		}
		out[p] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no Go files under %s", dir)
	}
	return out
}

// The documentation-prefix check is called only inside probe: no production
// file elsewhere declares or calls a documentation-prefix function or words
// a documentation refusal of its own; they all go through CheckTarget.
func TestDocumentationCheckOnlyInsideProbe(t *testing.T) {
	root := moduleRoot(t)
	seen := 0
	for p, f := range goFiles(t, root, 0) {
		rel, _ := filepath.Rel(root, p)
		if rel == "probe" || strings.HasPrefix(rel, "probe"+string(filepath.Separator)) {
			continue
		}
		seen++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if strings.Contains(strings.ToLower(n.Name), "documentationprefix") {
					t.Errorf("%s: %s: the documentation check belongs to probe (probe.CheckTarget)", rel, n.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(n.Value, "is a documentation address") {
					t.Errorf("%s: words its own documentation refusal %s: use probe.CheckTarget's", rel, n.Value)
				}
			}
			return true
		})
	}
	if seen < 50 {
		t.Fatalf("only %d production files outside probe: the walk missed the tree", seen)
	}
}
