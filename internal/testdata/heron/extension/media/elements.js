// elements.js defines Heron's controls as custom elements with open shadow
// roots, as component toolkits do: <hn-button> (a button inside its shadow
// root, its label slotted) and <hn-picker> (a drop-down whose options are
// rendered inside its shadow root from its `options` property; it selects
// the first option until one is picked, and only a pick by the user fires
// `change`, not setting `value`).
(function () {
  'use strict';

  class HnButton extends HTMLElement {
    static get observedAttributes() {
      return ['disabled'];
    }

    constructor() {
      super();
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = `<style>
        :host { display: inline-flex; }
        :host([hidden]) { display: none; }
        button { font: inherit; color: inherit; background: var(--vscode-button-secondaryBackground, #3a3d41); border: 0; padding: 3px 8px; cursor: pointer; border-radius: 2px; }
        :host([appearance="primary"]) button { background: var(--vscode-button-background, #0e639c); color: var(--vscode-button-foreground, #fff); }
        :host([appearance="icon"]) button { background: transparent; padding: 2px 4px; }
        button:disabled { opacity: 0.5; cursor: default; }
      </style><button part="control" type="button"><slot></slot></button>`;
      this.control = root.querySelector('button');
      // A disabled button swallows clicks before the page's handlers see them.
      this.addEventListener('click', (e) => {
        if (this.disabled) {
          e.stopImmediatePropagation();
          e.preventDefault();
        }
      }, true);
    }

    get disabled() {
      return this.hasAttribute('disabled');
    }

    set disabled(v) {
      this.toggleAttribute('disabled', !!v);
    }

    attributeChangedCallback() {
      this.control.disabled = this.disabled;
      this.setAttribute('aria-disabled', String(this.disabled));
    }
  }

  class HnPicker extends HTMLElement {
    constructor() {
      super();
      this._options = [];
      this._value = '';
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = `<style>
        :host { position: relative; display: inline-block; min-width: 8em; }
        .trigger { font: inherit; color: inherit; width: 100%; text-align: left; background: var(--vscode-dropdown-background, #3c3c3c); border: 1px solid var(--vscode-dropdown-border, #555); padding: 2px 6px; cursor: pointer; }
        [role="listbox"] { position: absolute; z-index: 10; left: 0; right: 0; background: var(--vscode-dropdown-background, #3c3c3c); border: 1px solid var(--vscode-dropdown-border, #555); }
        [role="listbox"][hidden] { display: none; }
        [role="option"] { padding: 2px 6px; cursor: pointer; }
        [role="option"][aria-selected="true"] { background: var(--vscode-list-activeSelectionBackground, #04395e); }
      </style><button class="trigger" part="trigger" type="button" aria-haspopup="listbox" aria-expanded="false"><span class="current"></span> &#9662;</button>
      <div role="listbox" part="listbox" hidden></div>`;
      this.trigger = root.querySelector('.trigger');
      this.listbox = root.querySelector('[role="listbox"]');
      this.trigger.addEventListener('click', () => this.toggle());
      this.listbox.addEventListener('click', (e) => {
        const o = e.target.closest('[role="option"]');
        if (!o) return;
        const changed = o.dataset.value !== this._value;
        this.value = o.dataset.value;
        this.toggle(false);
        if (changed) {
          this.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
          this.dispatchEvent(new Event('change', { bubbles: true, composed: true }));
        }
      });
    }

    get open() {
      return !this.listbox.hidden;
    }

    toggle(open = !this.open) {
      this.listbox.hidden = !open;
      this.trigger.setAttribute('aria-expanded', String(open));
    }

    /** options: [{value, label}], rendered as the listbox's options. */
    set options(list) {
      this._options = list.slice();
      this.listbox.replaceChildren(...this._options.map((o) => {
        const el = document.createElement('div');
        el.setAttribute('role', 'option');
        el.dataset.value = o.value;
        el.textContent = o.label;
        return el;
      }));
      if (!this._options.some((o) => o.value === this._value)) this._value = this._options.length ? this._options[0].value : '';
      this.render();
    }

    get options() {
      return this._options.slice();
    }

    get value() {
      return this._value;
    }

    set value(v) {
      if (!this._options.some((o) => o.value === v)) return;
      this._value = v;
      this.render();
    }

    render() {
      const cur = this._options.find((o) => o.value === this._value);
      this.trigger.querySelector('.current').textContent = cur ? cur.label : 'No provider';
      for (const el of this.listbox.children) el.setAttribute('aria-selected', String(el.dataset.value === this._value));
    }
  }

  customElements.define('hn-button', HnButton);
  customElements.define('hn-picker', HnPicker);
})();
