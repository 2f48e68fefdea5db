package billing

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCarryReasonIsNullWhenNone(t *testing.T) {
	b, err := json.Marshal(Carry{Status: CarryOK, CanCarry: true, PortMbps: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"reason":null`) || !strings.Contains(string(b), `"status":"ok"`) || strings.Count(string(b), `"reason"`) != 1 {
		t.Errorf("%s: want reason null, once, beside the other fields", b)
	}
	b, _ = json.Marshal(Carry{Status: CarryCannot, Reason: "cannot carry"})
	var back Carry
	if err := json.Unmarshal(b, &back); err != nil || back.Reason != "cannot carry" || back.Status != CarryCannot {
		t.Errorf("%s read back as %+v, %v", b, back, err)
	}
}
