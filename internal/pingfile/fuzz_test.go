package pingfile

import (
	"bytes"
	"os"
	"testing"
)

// FuzzRead checks that no file makes the readers panic: every input reads
// or fails with an error.
func FuzzRead(f *testing.F) {
	for _, p := range []string{"testdata/atlas-ping.json", "testdata/atlas-ping.jsonl", "testdata/globalping-ping.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema":"linecheck.probe/v1","status":"ok","rtt_ms":1}`))
	f.Add([]byte(`[{"type":"ping","prb_id":1,"dst_addr":"::1","timestamp":1,"result":[{"late":1},{"rtt":1,"dup":true}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := Read(bytes.NewReader(b), "fuzz")
		if err == nil {
			_ = Records(ss)
		}
	})
}
