package intent

import "testing"

// TestValidationLossy: validation.lossy's budgets are fractions, default
// field by field, and their fields have positions for findings.
func TestValidationLossy(t *testing.T) {
	const head = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless}\n"
	f, err := Parse("f.yaml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	if f.Validation.Lossy.MaxDropRate != DefaultLossyValidation.MaxDropRate || f.Validation.Lossy.MaxGoodputLoss != 0.05 {
		t.Errorf("no validation block: %+v, want the defaults", f.Validation.Lossy)
	}
	f, err = Parse("f.yaml", []byte(head+"validation:\n  lossy:\n    maxDropRate: 0.5%\n    maxGoodputLoss: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := f.Validation.Lossy
	if l.MaxDropRate != 0.005 || l.MaxGoodputLoss != 0.1 || l.MaxRetransmissionRate != DefaultLossyValidation.MaxRetransmissionRate {
		t.Errorf("lossy = %+v", l)
	}
	if p, ok := f.FieldPos("validation.lossy.maxGoodputLoss"); !ok || p.Line != 7 {
		t.Errorf("FieldPos(validation.lossy.maxGoodputLoss) = %v, %v; want line 7", p, ok)
	}
	if _, err := Parse("f.yaml", []byte(head+"validation:\n  lossy: {maxDropRate: 150%}\n")); err == nil {
		t.Error("maxDropRate 150% accepted")
	}
}
