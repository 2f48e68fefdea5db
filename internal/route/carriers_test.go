package route

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUserRoutesPerCarrier(t *testing.T) {
	doc := &BacktraceDoc{Results: []BacktraceResult{
		{Name: "sh-ct", Carrier: CarrierTelecom, City: "Shanghai", LineClass: LineCN2GIA, Reached: true},
		{Name: "bj-cu", Carrier: CarrierUnicom, City: "Beijing", LineClass: LineCU4837, Reached: true},
		{Name: "gz-cm", Carrier: CarrierMobile, City: "Guangzhou", LineClass: LineCMIN2},
	}}
	users := []User{{"Shanghai", CarrierTelecom}, {"Tianjin", CarrierUnicom}, {"Shenzhen", CarrierMobile}, {"Tokyo", CarrierOther}}
	fwd := &Trace{LineClass: LineChinaNet163, Hops: []Hop{{TTL: 1}}}
	allowed := map[string][]string{CarrierTelecom: {LineCN2GIA}, CarrierUnicom: {LineCU9929}, CarrierMobile: {LineCMIN2}}
	rs := UserRoutes(users, doc, fwd, CarrierTelecom, nil, allowed)
	if len(rs) != 4 {
		t.Fatalf("%d routes", len(rs))
	}
	// Telecom: return GIA passes, but the forward trace from a Telecom vantage rode 163.
	if r := rs[0]; r.Return != LineCN2GIA || r.Forward != LineChinaNet163 || r.Pass == nil || *r.Pass {
		t.Errorf("telecom %+v", r)
	}
	// Unicom: matched to Beijing (nearest to Tianjin), 4837 is not allowed.
	if r := rs[1]; r.ReturnTarget != "bj-cu" || r.Forward != "" || r.Pass == nil || *r.Pass ||
		!strings.Contains(strings.Join(r.Notes, ";"), "nearest unicom target") {
		t.Errorf("unicom %+v", r)
	}
	// Mobile: CMIN2 allowed, the unreached target is noted.
	if r := rs[2]; r.Pass == nil || !*r.Pass || !strings.Contains(strings.Join(r.Notes, ";"), "not reached") {
		t.Errorf("mobile %+v", r)
	}
	// Other: nothing measured, nothing to check.
	if r := rs[3]; r.Return != "" || r.Pass != nil {
		t.Errorf("other %+v", r)
	}
	none := UserRoutes(users[:1], nil, nil, "", nil, allowed)
	if none[0].Pass != nil || !strings.Contains(none[0].Notes[0], "linecheck backtrace") {
		t.Errorf("without a backtrace: %+v", none[0])
	}
}

func TestUserRouteJSONWritesUnmeasuredAsNull(t *testing.T) {
	b, err := json.Marshal(UserRoute{Carrier: CarrierMobile, City: "Guangzhou", Return: LineCMI})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	if v, ok := m["forward"]; !ok || v != nil {
		t.Errorf("forward = %v (%s), want null", v, b)
	}
	if m["return"] != LineCMI || m["pass"] != nil {
		t.Errorf("%s", b)
	}
}
