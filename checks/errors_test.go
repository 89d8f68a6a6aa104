package checks

import "testing"

func TestIsOpenAIError(t *testing.T) {
	for body, want := range map[string]bool{
		`{"error":{"message":"m","type":"invalid_request_error","param":null,"code":null}}`: true,
		`{"error":{"message":"m","type":"invalid_request_error","code":403}}`:               true,
		`{"error":{"message":"m","status":403}}`:                                            false,
		`{"error":{"message":"m","type":"t"}}`:                                              false,
		`{"error":{"message":1,"type":"t","code":1}}`:                                       false,
		`{"type":"about:blank","title":"Forbidden","status":403}`:                           false,
		`{"error":"forbidden"}`:                                                             false,
		`not json`:                                                                          false,
	} {
		if got := isOpenAIError([]byte(body)); got != want {
			t.Errorf("isOpenAIError(%s) = %v, want %v", body, got, want)
		}
	}
}
