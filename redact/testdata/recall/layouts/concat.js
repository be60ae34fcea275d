const stripeKey = "sk_live_" + "SHwiVwYH7C9ptErtuuS3FAKE";
const gh = 'ghp_' + 'qEhHQ59T6PabhJOX' + 'KhJ7hP3YXuxDC93CFAKE';
const slack = `xoxb-${'062532592318-8345669427332-vP1FFas5DZTWhu0DxRK5FAKE'}`;
