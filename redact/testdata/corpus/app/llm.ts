// Model clients used by the support bot.
export const openaiKey = "sk-proj-9DoV8gz4FkQ1okTBGzvAmwufUxbvJDCTbyvHNsG9eh6Yo4gfT3BlbkFJqrc5XlrWi0B26R08qzjI6GKFSufrdZSlB5er8bOfZqfM2oeq";
export const anthropicKey = "sk-ant-api03-HZEM9YpvujA_C5Q52ryFlwRlOEVHzc0X0AWIRh_JUqBlIFXZ53Ncqe28-ajY75FnCttn6kfaqDeMqG3omjMyXHCabM6JOAA";
const npmToken = "npm_3hDavJA76rNicHTp8hkqdlm7tOtHWnsCGRlr";
const sendgrid = "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";

export interface Message {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Keep the last n messages and the system prompt. */
export function trim(history: Message[], n: number): Message[] {
  const system = history.filter((m) => m.role === "system");
  const rest = history.filter((m) => m.role !== "system");
  return [...system, ...rest.slice(-n)];
}
