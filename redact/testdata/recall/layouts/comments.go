package billing

// token = Gov05jSCi7vDNNXdMbicBCyMLhGdFAKE
/* api_key: e0z5VbdBiOJhZZszE09DdZQ5Dd5QFAKE */
func Charge() error { return nil }
