package keys

var anthropic = "sk-ant-api03-" + "H8oacopoPV744f3qSDvRrEizKSZ3Js4AFxR__bK7pP6UXTinnH2GsOM5U3qG10l4tFgYA8a1siHqgRMyLXEsiULTmFAKEAA"
var ghToken = "ghp_" + "aRz2U9nwW5vIYb13EKFasIr5LhZyx3odFAKE"
