package volcengine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	akFile := writeFile(t, "ak", "  AK-from-file\n")
	skFile := writeFile(t, "sk", "SK-from-file\n")
	emptyFile := writeFile(t, "empty", "\n")
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    Config
		wantErr []string
	}{
		{
			name: "file values load",
			file: "[Global]\nregion-id = cn-shanghai\naccess-key = AK1\nsecret-key = SK1\nendpoint = open.ap-southeast-1.byteplusapi.com\n",
			want: Config{Region: "cn-shanghai", AccessKey: "AK1", SecretKey: "SK1", Endpoint: "open.ap-southeast-1.byteplusapi.com", Scheme: "https"},
		},
		{
			name: "env fills each missing field",
			file: "[Global]\nregion-id = cn-shanghai\n",
			env:  map[string]string{envRegion: "cn-beijing", envAccessKey: "AK2", envSecretKey: "SK2"},
			want: Config{Region: "cn-shanghai", AccessKey: "AK2", SecretKey: "SK2", Endpoint: DefaultEndpoint, Scheme: "https"},
		},
		{
			name: "env only, endpoint from env",
			env:  map[string]string{envRegion: "cn-beijing", envAccessKey: "AK", envSecretKey: "SK", envEndpoint: "http://127.0.0.1:9999"},
			want: Config{Region: "cn-beijing", AccessKey: "AK", SecretKey: "SK", Endpoint: "http://127.0.0.1:9999", Scheme: "https"},
		},
		{
			name: "key files",
			file: fmt.Sprintf("[Global]\nregion-id = r\naccess-key-file = %s\nsecret-key-file = %s\nscheme = HTTP\n", akFile, skFile),
			want: Config{Region: "r", AccessKey: "AK-from-file", SecretKey: "SK-from-file", AccessKeyFile: akFile, SecretKeyFile: skFile, Endpoint: DefaultEndpoint, Scheme: "http"},
		},
		{
			name:    "every missing field named at once",
			file:    "[Global]\n",
			wantErr: []string{"region is not set", "access key is not set", "secret key is not set"},
		},
		{
			name:    "bad scheme",
			file:    "[Global]\nregion-id = r\naccess-key = a\nsecret-key = s\nscheme = ftp\n",
			wantErr: []string{`scheme "ftp"`},
		},
		{
			name:    "unreadable and empty key files",
			file:    fmt.Sprintf("[Global]\nregion-id = r\naccess-key-file = /nonexistent/ak\nsecret-key-file = %s\n", emptyFile),
			wantErr: []string{"access-key-file", "secret-key-file", "is empty"},
		},
		{
			name:    "syntax error",
			file:    "access-key = AKSECRETVALUE\n",
			wantErr: []string{"expected section header"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := ""
			if tc.file != "" {
				path = writeFile(t, "cloud-config", tc.file)
			}
			got, err := LoadConfig(path, envFrom(tc.env))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, got %v", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "AKSECRETVALUE") {
					t.Errorf("error quotes a key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope"), envFrom(nil))
	if err == nil || !strings.Contains(err.Error(), "read cloud config") {
		t.Fatalf("error = %v", err)
	}
}

func TestConfigStringRedacts(t *testing.T) {
	t.Parallel()
	cfg := Config{Region: "cn-beijing", AccessKey: testAccessKey, SecretKey: testSecretKey, Endpoint: DefaultEndpoint, Scheme: "https"}
	for _, format := range []string{"%v", "%+v", "%s", "%#v"} {
		out := fmt.Sprintf(format, cfg)
		if strings.Contains(out, testAccessKey) || strings.Contains(out, testSecretKey) {
			t.Errorf("%s leaks a key: %s", format, out)
		}
		if !strings.Contains(out, "[redacted]") || !strings.Contains(out, "cn-beijing") {
			t.Errorf("%s = %s", format, out)
		}
	}
	if out := fmt.Sprintf("%v", Config{}); !strings.Contains(out, "<unset>") {
		t.Errorf("empty keys should read <unset>: %s", out)
	}
}

// TestCredentialErrors: each credential problem is one line naming the
// provider and the file alternative; an unreadable key file is reported
// once, as itself, not also as a missing key.
func TestCredentialErrors(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		want       []string
	}{
		{"key file missing", "[Global]\nregion-id = cn-beijing\naccess-key-file = " + missing + "\nsecret-key = SK\n", nil, []string{
			"volcengine: access-key-file " + missing + ": no such file or directory",
		}},
		{"nothing set", "[Global]\nregion-id = cn-beijing\n", nil, []string{
			"volcengine: access key is not set: set access-key-file (a file holding it) or access-key in [Global], or ACCESS_KEY",
			"volcengine: secret key is not set: set secret-key-file (a file holding it) or secret-key in [Global], or SECRET_KEY",
		}},
		{"upstream's environment variables", "", map[string]string{"ACCESS_KEY": "AK", "SECRET_KEY": "SK", "REGION_ID": "cn-beijing"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := ""
			if tc.file != "" {
				path = writeFile(t, "cloud-config.ini", tc.file)
			}
			_, err := LoadConfig(path, envFrom(tc.env))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("LoadConfig: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("LoadConfig succeeded")
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tc.want) {
				t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestLoadConfigSyntaxErrorPosition: a malformed file names file:line:column
// and what was expected, once, and never a value.
func TestLoadConfigSyntaxErrorPosition(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "volc.conf")
	if err := os.WriteFile(path, []byte("[Global]\nsecret-key = hidden-value\nregion-id cn-beijing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path, envFrom(nil))
	if err == nil || !strings.Contains(err.Error(), "cloud config "+path+":3:11: expected '='") || strings.Count(err.Error(), path) != 1 {
		t.Fatalf("error = %v", err)
	}
	if strings.Contains(err.Error(), "hidden-value") {
		t.Fatalf("error quotes a value: %v", err)
	}
}
