package vultr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fuzzToken is planted as the token in every input; it must never come back
// in an error or in the config's printed forms.
const fuzzToken = "FUZZTOKEN9f8e7d6c5b4a"

// FuzzParseConfig builds cloud-config JSON around a known token from fuzzed
// fields, a fuzzed shape for the token (string, number-like, array, object)
// and a fuzzed tail that may break the syntax.
func FuzzParseConfig(f *testing.F) {
	f.Add("c", "", uint8(0), "")
	f.Add("", "ftp://x", uint8(1), "")
	f.Add("c", "http://127.0.0.1:1", uint8(2), "}")
	f.Add("c", "", uint8(3), ",")
	f.Add("\x00", "::", uint8(4), `"`)
	f.Fuzz(func(t *testing.T, clusterID, apiURL string, shape uint8, tail string) {
		for _, s := range []string{clusterID, apiURL, tail} {
			if strings.Contains(s, "FUZZ") {
				return
			}
		}
		cid, _ := json.Marshal(clusterID)
		u, _ := json.Marshal(apiURL)
		token := map[uint8]string{0: `"` + fuzzToken + `"`, 1: `["` + fuzzToken + `"]`, 2: `{"v":"` + fuzzToken + `"}`, 3: `"` + fuzzToken, 4: fuzzToken}[shape%5]
		data := fmt.Sprintf(`{"cluster_id": %s, "token": %s, "api_url": %s}%s`, cid, token, u, tail)
		c, err := ParseConfig([]byte(data))
		if err != nil {
			checkNoToken(t, "ParseConfig error", err.Error())
			return
		}
		if verr := c.Validate(); verr != nil {
			checkNoToken(t, "Validate error", verr.Error())
		}
		checkNoToken(t, "String", c.String())
		checkNoToken(t, "fmt", fmt.Sprintf("%v %+v %#v %s %v", *c, *c, *c, *c, c))
	})
}

func checkNoToken(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{fuzzToken, base64.StdEncoding.EncodeToString([]byte(fuzzToken))} {
		if strings.Contains(s, secret) {
			t.Fatalf("%s leaks the token: %s", where, s)
		}
	}
}
