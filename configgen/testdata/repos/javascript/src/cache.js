// LRU cache fixture for configgen tests.

class LRU {
  constructor(limit) {
    this.limit = limit;
    this.map = new Map();
  }

  get(key) {
    if (!this.map.has(key)) {
      return undefined;
    }
    const value = this.map.get(key);
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key, value) {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) {
      const oldest = this.map.keys().next().value;
      this.map.delete(oldest);
    }
  }
}

function memo(fn) {
  const cache = new LRU(100);
  return function (x) {
    let v = cache.get(x);
    if (v === undefined) {
      v = fn(x);
      cache.set(x, v);
    }
    return v;
  };
}

const sum = (xs) => {
  let total = 0;
  for (const x of xs) total += x;
  return total;
};

module.exports = { LRU, memo, sum };
