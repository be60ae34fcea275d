package keys

var anthropic = "sk-ant-api03-" + "CgzeWw5FbIm4fMELrVMN7cHwS8mFOPauFO_nDjUaPMuusqD90JKYCc-23k-CATmz9ndlEOEhfG6ub3kmholS9IqfaFAKEAA"
var ghToken = "ghp_" + "eXuOdBYVHvjaFhV2lbt6XTVuhvXNiYQOFAKE"
