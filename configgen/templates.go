package configgen

import "dialogfarm/dialog/vocab"

// localeText holds the template fallback's phrases for one locale.
// Placeholders: {ref} the code referred to, {sym} the function name,
// {file} the file, {files} the open files, {lang} the language's name,
// {topic} and {task} a general topic and task for queries about no code.
type localeText struct {
	// terse and normal map an intent to a query about {ref}.
	terse, normal map[string]string
	// general maps an intent to a query about no code in particular.
	general map[string]string
	// ref maps a reference region to how {ref} is said.
	ref map[string]string
	// verbose maps a difficulty to the background a verbose query adds;
	// hardHint is added to normal queries of hard difficulty.
	verbose  map[string]string
	hardHint string
	// codeIntro introduces pasted code.
	codeIntro string
	// followUps maps a follow-up kind to the message sent.
	followUps map[string]string
}

func texts() map[string]localeText {
	out := map[string]localeText{
		"en": {
			terse: m8("what does {ref} do?", "write a {lang} helper that goes with {ref}", "fix {ref}",
				"tests for {ref}", "document {ref}", "make {ref} faster", "refactor {ref}", "is {ref} idiomatic {lang}?"),
			normal: m8("Can you explain what {ref} does and why it is written this way?",
				"Please write a new function that complements {ref}, handling a list of inputs instead of a single one.",
				"There's a bug somewhere in {ref}; it returns the wrong result for some inputs. Can you find and fix it?",
				"Write unit tests for {ref}, covering the normal case and the edge cases.",
				"Add clear doc comments to {ref} explaining the parameters and the return value.",
				"How can I make {ref} faster or use less memory without changing what it returns?",
				"Refactor {ref} to be easier to read, without changing its behaviour.",
				"Is {ref} written the idiomatic {lang} way, or would an experienced developer do it differently?"),
			general: m8("Can you explain {topic} in {lang}?", "Write a {lang} function that {task}.",
				"My {lang} code that {task} keeps failing with an error. What are the usual causes?",
				"How do I write good unit tests in {lang} for code that {task}?",
				"What is the standard way to write doc comments in {lang}?",
				"What is the most efficient way in {lang} to write code that {task}?",
				"How should I structure {lang} code that {task} so it stays maintainable?",
				"When should I use {topic} in {lang}?"),
			ref: refs("this code", "the {sym} function", "{file}", "{files}"),
			verbose: diffs("I'm fairly new to {lang}, so please keep it simple and show the final code in full.",
				"I'm working in {file} and want to understand the trade-offs, so please explain your reasoning step by step before the final code.",
				"This runs in production under heavy load, so think about edge cases, error handling, performance and concurrency, and point out anything risky."),
			hardHint: "Please consider edge cases and performance.", codeIntro: "Here is the code:",
			followUps: kinds("I don't quite follow. Can you explain that part again more simply?",
				"Can you change it so it also handles empty input?", "Can you also write tests for that?",
				"Can you show a small usage example?", "What happens with empty or very large inputs?",
				"Can you make it shorter and simpler?", "Why is that better than the original?"),
		},
		"zh": {
			terse: m8("{ref}是干什么的？", "写一个配合{ref}用的 {lang} 辅助函数", "修一下{ref}", "给{ref}写测试",
				"给{ref}加注释", "让{ref}更快", "重构{ref}", "{ref}符合 {lang} 的习惯写法吗？"),
			normal: m8("能解释一下{ref}是做什么的吗？为什么要这样写？",
				"请写一个新函数配合{ref}使用，处理一组输入而不是单个输入。",
				"{ref}里有个 bug，有些输入会返回错误的结果，能帮我找出来并修复吗？",
				"请为{ref}编写单元测试，覆盖正常情况和边界情况。",
				"请给{ref}加上清晰的文档注释，说明参数和返回值。",
				"怎样在不改变返回结果的前提下让{ref}更快或更省内存？",
				"请重构{ref}，让它更易读，但不要改变行为。",
				"{ref}的写法符合 {lang} 的习惯吗？有经验的开发者会怎么写？"),
			general: m8("{lang} 里的 {topic} 是怎么工作的？", "用 {lang} 写一个函数，{task}。",
				"我的 {lang} 代码（{task}）一直报错，常见原因有哪些？", "在 {lang} 里怎么给这类代码写好单元测试：{task}？",
				"{lang} 里写文档注释的标准方式是什么？", "在 {lang} 里实现“{task}”最高效的写法是什么？",
				"{lang} 里“{task}”这样的代码应该怎么组织才好维护？", "{lang} 里什么时候应该用 {topic}？"),
			ref: refs("这段代码", "{sym} 函数", "{file} 这个文件", "这几个文件（{files}）"),
			verbose: diffs("我刚开始学 {lang}，请讲得简单一点，并给出完整的最终代码。",
				"我在改 {file}，想了解其中的取舍，请先一步步说明思路，再给出最终代码。",
				"这段代码在生产环境高负载下运行，请考虑边界情况、错误处理、性能和并发，并指出有风险的地方。"),
			hardHint: "请考虑边界情况和性能。", codeIntro: "代码如下：",
			followUps: kinds("没太看懂，能再简单解释一下那部分吗？", "能改一下，让它也能处理空输入吗？",
				"能顺便写一下测试吗？", "能给个简单的使用示例吗？", "输入为空或者特别大的时候会怎样？",
				"能写得更短更简单一点吗？", "为什么这样比原来的好？"),
		},
		"ja": {
			terse: m8("{ref}は何をしていますか？", "{ref}と一緒に使う {lang} のヘルパーを書いて", "{ref}を直して",
				"{ref}のテストを書いて", "{ref}にコメントを付けて", "{ref}を速くして", "{ref}をリファクタリングして",
				"{ref}は {lang} らしい書き方？"),
			normal: m8("{ref}が何をしているのか、なぜこう書かれているのか説明してもらえますか？",
				"{ref}を補う新しい関数を書いてください。単一の入力ではなく入力のリストを扱うようにしてください。",
				"{ref}のどこかにバグがあり、一部の入力で間違った結果を返します。見つけて直してもらえますか？",
				"{ref}の単体テストを書いてください。通常のケースと境界ケースをカバーしてください。",
				"{ref}に引数と戻り値を説明する分かりやすいドキュメントコメントを追加してください。",
				"戻り値を変えずに{ref}を速く、またはメモリ効率よくするにはどうすればいいですか？",
				"動作を変えずに、{ref}を読みやすくリファクタリングしてください。",
				"{ref}は {lang} として自然な書き方ですか？経験のある開発者なら違う書き方をしますか？"),
			general: m8("{lang} の {topic} はどういう仕組みですか？", "{task} {lang} の関数を書いてください。",
				"{task} {lang} のコードがエラーで失敗し続けます。よくある原因は何ですか？",
				"{task} コードの良い単体テストを {lang} でどう書けばいいですか？",
				"{lang} でドキュメントコメントを書く標準的な方法は？", "{task} 処理を {lang} で最も効率よく書く方法は？",
				"{task} {lang} のコードを保守しやすく構成するには？", "{lang} で {topic} を使うべきなのはどんなときですか？"),
			ref: refs("このコード", "{sym} 関数", "{file}", "これらのファイル（{files}）"),
			verbose: diffs("{lang} は初心者なので、簡単に説明して最終的なコードを全部見せてください。",
				"{file} を編集していてトレードオフを理解したいので、最終的なコードの前に考え方を順に説明してください。",
				"本番環境の高負荷で動くコードなので、境界ケース、エラー処理、性能、並行性を考慮し、危険な点を指摘してください。"),
			hardHint: "境界ケースと性能も考慮してください。", codeIntro: "コードはこちらです：",
			followUps: kinds("よく分かりませんでした。その部分をもう少し簡単に説明してもらえますか？",
				"空の入力も扱えるように変更できますか？", "それのテストも書いてもらえますか？", "簡単な使用例を見せてもらえますか？",
				"入力が空だったり非常に大きかったりするとどうなりますか？", "もっと短くシンプルにできますか？",
				"なぜそれが元のコードより良いのですか？"),
		},
		"ko": {
			terse: m8("{ref}는 뭘 하나요?", "{ref}와 함께 쓸 {lang} 헬퍼를 작성해 줘", "{ref} 고쳐 줘", "{ref} 테스트 작성해 줘",
				"{ref}에 주석 달아 줘", "{ref} 더 빠르게 해 줘", "{ref} 리팩터링해 줘", "{ref}는 {lang}답게 작성됐나요?"),
			normal: m8("{ref}가 무엇을 하는지, 왜 이렇게 작성됐는지 설명해 줄 수 있나요?",
				"{ref}를 보완하는 새 함수를 작성해 주세요. 입력 하나가 아니라 입력 목록을 처리하도록요.",
				"{ref} 어딘가에 버그가 있어서 일부 입력에서 잘못된 결과가 나옵니다. 찾아서 고쳐 줄 수 있나요?",
				"{ref}에 대한 단위 테스트를 작성해 주세요. 일반적인 경우와 경계 조건을 모두 다뤄 주세요.",
				"{ref}에 매개변수와 반환값을 설명하는 명확한 문서 주석을 추가해 주세요.",
				"반환값은 그대로 두고 {ref}를 더 빠르게 하거나 메모리를 덜 쓰게 하려면 어떻게 해야 하나요?",
				"동작은 바꾸지 말고 {ref}를 읽기 쉽게 리팩터링해 주세요.",
				"{ref}는 {lang}다운 방식으로 작성됐나요? 숙련된 개발자라면 다르게 작성할까요?"),
			general: m8("{lang}에서 {topic}는 어떻게 동작하나요?", "{task} {lang} 함수를 작성해 주세요.",
				"{task} {lang} 코드가 계속 오류로 실패합니다. 흔한 원인이 뭔가요?",
				"{task} 코드에 대한 좋은 단위 테스트를 {lang}로 어떻게 작성하나요?",
				"{lang}에서 문서 주석을 작성하는 표준 방식은 무엇인가요?", "{task} 코드를 {lang}로 가장 효율적으로 작성하는 방법은?",
				"{task} {lang} 코드를 유지보수하기 좋게 구성하려면 어떻게 해야 하나요?", "{lang}에서 {topic}는 언제 써야 하나요?"),
			ref: refs("이 코드", "{sym} 함수", "{file} 파일", "이 파일들({files})"),
			verbose: diffs("{lang}는 처음이라서 쉽게 설명해 주시고 최종 코드를 전부 보여 주세요.",
				"{file}을 작업 중인데 트레이드오프를 이해하고 싶어요. 최종 코드 전에 단계별로 설명해 주세요.",
				"운영 환경의 높은 부하에서 돌아가는 코드라서 경계 조건, 오류 처리, 성능, 동시성을 고려하고 위험한 부분을 짚어 주세요."),
			hardHint: "경계 조건과 성능도 고려해 주세요.", codeIntro: "코드는 다음과 같습니다:",
			followUps: kinds("잘 이해가 안 돼요. 그 부분을 더 쉽게 다시 설명해 줄 수 있나요?",
				"빈 입력도 처리하도록 바꿔 줄 수 있나요?", "그것에 대한 테스트도 작성해 줄 수 있나요?", "간단한 사용 예제를 보여 줄 수 있나요?",
				"입력이 비어 있거나 아주 크면 어떻게 되나요?", "더 짧고 간단하게 만들 수 있나요?", "그게 원래 코드보다 왜 더 나은가요?"),
		},
	}
	for loc, t := range europeanTexts() {
		out[loc] = t
	}
	return out
}

func m8(v ...string) map[string]string {
	intents := vocab.Values(vocab.DimIntent)
	out := make(map[string]string, len(intents))
	for i, intent := range intents {
		out[intent] = v[i]
	}
	return out
}

func refs(selection, function, file, files string) map[string]string {
	return map[string]string{"selection": selection, "enclosing_function": function, "current_file": file, "open_files": files}
}

func diffs(easy, medium, hard string) map[string]string {
	return map[string]string{"easy": easy, "medium": medium, "hard": hard}
}

// FollowUpKinds lists the follow-up kinds a policy may name.
func FollowUpKinds() []string {
	return []string{"clarify", "request_change", "ask_tests", "ask_example", "edge_cases", "simplify", "explain_more"}
}

func kinds(v ...string) map[string]string {
	out := map[string]string{}
	for i, k := range FollowUpKinds() {
		out[k] = v[i]
	}
	return out
}
