package main

import "testing"

func TestHealthURL(t *testing.T) {
	for endpoint, want := range map[string]string{
		"":                "http://127.0.0.1:13133/",
		"127.0.0.1:9000":  "http://127.0.0.1:9000/",
		"0.0.0.0:13133":   "http://127.0.0.1:13133/",
		":13133":          "http://127.0.0.1:13133/",
		"[::]:13133":      "http://127.0.0.1:13133/",
		"[::1]:13133":     "http://[::1]:13133/",
		"localhost:13133": "http://localhost:13133/",
	} {
		if got := healthURL(endpoint); got != want {
			t.Errorf("healthURL(%q) = %q, want %q", endpoint, got, want)
		}
	}
}
