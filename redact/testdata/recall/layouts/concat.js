const stripeKey = "sk_live_" + "8765VA1GIlSwlhrUCoEVFAKE";
const gh = 'ghp_' + 'IljyOMsDngxKIJAI' + 'jpxMyigPG35qV9eAFAKE';
const slack = `xoxb-${'304669099854-7097824907497-igbEbW3ni1cEcHxmjxpAFAKE'}`;
