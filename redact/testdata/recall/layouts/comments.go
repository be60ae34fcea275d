package billing

// token = 4mqEcx751HZ9FUrqXw6eDKA9QaLyFAKE
/* api_key: jGyGBiHrltEtVVQPPQlxfhA4QWV3FAKE */
func Charge() error { return nil }
