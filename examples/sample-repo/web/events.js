// A tiny event emitter for the storefront widgets.

class Emitter {
  constructor() {
    this.handlers = new Map();
  }

  on(name, handler) {
    if (!this.handlers.has(name)) {
      this.handlers.set(name, []);
    }
    this.handlers.get(name).push(handler);
    return () => this.off(name, handler);
  }

  off(name, handler) {
    const list = this.handlers.get(name) || [];
    this.handlers.set(
      name,
      list.filter((h) => h !== handler)
    );
  }

  emit(name, payload) {
    for (const handler of this.handlers.get(name) || []) {
      handler(payload);
    }
  }
}

const debounce = (fn, ms) => {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
};

module.exports = { Emitter, debounce };
