/**
 * GorillaFileSystem: an in-memory tree of directories and files addressed one folder at a time.
 * Behaviour follows BFCL's Python class, including its object sharing: moving a directory gives the
 * new directory the old one's contents map (children keep their old parent), copying gives a shallow
 * copy (files are shared), and a directory's equality ignores its parent.
 */
import { formatFixed, pyStr, strRepr } from '../py/format.ts';
import { compare } from '../py/num.ts';
import { splitlines, splitWhitespace, pyLen, rstripChars, stripChars } from '../py/str.ts';
import { type PyDict, PyError, type PyObject, type PyValue, dict, truthy, typeName } from '../py/value.ts';
import { type ApiContext, type BfclApi, method, type Method, requireStr, strContains } from './api.ts';

type Node = FsFile | FsDirectory;

export class FsFile implements PyObject {
  readonly pyType = 'File';
  constructor(
    readonly name: PyValue,
    public content: string,
  ) {}
  repr(): string {
    return `<<File: ${pyStr(this.name)}, Content: ${this.content}>>`;
  }
  equals(other: PyValue): boolean {
    return other instanceof FsFile && other.name === this.name && other.content === this.content;
  }
}

export class FsDirectory implements PyObject {
  readonly pyType = 'Directory';
  contents = new Map<PyValue, Node>();
  constructor(
    readonly name: PyValue,
    readonly parent: FsDirectory | null,
  ) {}
  addFile(name: PyValue, content = ''): void {
    if (this.contents.has(name)) throw new PyError('ValueError', `File '${pyStr(name)}' already exists in directory '${pyStr(this.name)}'.`);
    this.contents.set(name, new FsFile(name, content));
  }
  addDirectory(name: PyValue): FsDirectory {
    if (this.contents.has(name)) throw new PyError('ValueError', `Directory '${pyStr(name)}' already exists in directory '${pyStr(this.name)}'.`);
    const d = new FsDirectory(name, this);
    this.contents.set(name, d);
    return d;
  }
  item(name: PyValue): Node | undefined {
    return name === '.' ? this : this.contents.get(name);
  }
  repr(): string {
    const contents = `{${[...this.contents].map(([k, v]) => `${typeof k === 'string' ? strRepr(k) : pyStr(k)}: ${v.repr()}`).join(', ')}}`;
    return `<Directory: ${pyStr(this.name)}, Parent: ${this.parent ? pyStr(this.parent.name) : 'None'}, Contents: ${contents}>`;
  }
  equals(other: PyValue): boolean {
    if (!(other instanceof FsDirectory) || other.name !== this.name || other.contents.size !== this.contents.size) return false;
    for (const [k, v] of this.contents) {
      const w = other.contents.get(k);
      if (w === undefined || !v.equals(w)) return false;
    }
    return true;
  }
}

const INVALID_NAME_CHARS = '|/\\?%*:"><';

export class GorillaFileSystem implements BfclApi {
  readonly className = 'GorillaFileSystem';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly longContext: boolean;
  private root: FsDirectory;
  private current: FsDirectory;
  private readonly tailUsed: PyValue[];
  private readonly contentExtension: string;
  private readonly populateNames: PyValue[];

  constructor(ctx: ApiContext) {
    this.longContext = ctx.longContext;
    this.tailUsed = ctx.longContext ? (ctx.shared.constant('FILES_TAIL_USED') as PyValue[]) : [];
    this.contentExtension = ctx.longContext ? (ctx.shared.constant('FILE_CONTENT_EXTENSION') as string) : '';
    this.populateNames = ctx.longContext ? (ctx.shared.constant('POPULATE_FILE_EXTENSION') as PyValue[]) : [];
    this.root = new FsDirectory('/', null);
    const root = ctx.config.get('root');
    if (root instanceof Map) {
      const [name, spec] = [...root][0] as [PyValue, PyValue];
      this.root = this.loadDirectory((spec as PyDict).get('contents') as PyDict, new FsDirectory(name, null));
    }
    this.current = this.root;
    this.methods = new Map(Object.entries(this.table()));
  }

  state(): [string, PyValue][] {
    return [
      ['long_context', this.longContext],
      ['root', this.root],
    ];
  }

  private loadDirectory(current: PyDict, parent: FsDirectory): FsDirectory {
    let bottommost = true;
    for (const [name, spec] of current) {
      const s = spec as PyDict;
      if (s.get('type') === 'directory') {
        bottommost = false;
        parent.contents.set(name, this.loadDirectory(s.get('contents') as PyDict, new FsDirectory(name, parent)));
      } else if (s.get('type') === 'file') {
        let content = s.get('content') as string;
        if (this.longContext && !this.tailUsed.includes(name)) content += this.contentExtension;
        parent.contents.set(name, new FsFile(name, content));
      }
    }
    if (bottommost && this.longContext) for (const name of this.populateNames) parent.addFile(name);
    return parent;
  }

  /** Resolve a path of folders from the current directory (or the root for a leading '/'). */
  private navigate(path: PyValue): FsDirectory | PyDict {
    if (path === null || path === '.') return this.current;
    if (path === '/') return this.root;
    const p = requireStr(path, 'strip');
    let dir = p.startsWith('/') ? this.root : this.current;
    for (const name of stripChars(p, '/').split('/')) {
      const next = dir.item(name);
      if (!(next instanceof FsDirectory)) return dict([['error', `cd: '${p}': No such file or directory`]]);
      dir = next;
    }
    return dir;
  }

  private validName(name: PyValue): boolean {
    if (typeof name !== 'string') throw new PyError('TypeError', `argument of type '${typeName(name)}' is not iterable`);
    return ![...INVALID_NAME_CHARS].some((c) => name.includes(c));
  }

  private file(name: PyValue): FsFile | undefined {
    const item = this.current.contents.get(name);
    return item instanceof FsFile ? item : undefined;
  }

  private table(): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    return {
      pwd: method([], () => {
        const path: string[] = [];
        for (let d: FsDirectory | null = this.current; d !== null; d = d.parent) path.push(pyStr(d.name));
        return dict([['current_working_directory', `/${path.reverse().join('/')}`]]);
      }),
      ls: method([{ name: 'a', fallback: () => false }], ({ a }) => {
        let names = [...this.current.contents.keys()];
        if (!truthy(a!)) names = names.filter((n) => !(typeof n === 'string' && n.startsWith('.')));
        return dict([['current_directory_content', names]]);
      }),
      cd: method(['folder'], ({ folder }) => {
        let f = rstripChars(requireStr(folder!, 'rstrip'), '/');
        if (f === '') f = '/';
        if (!['.', '..', '/'].includes(f) && f.includes('/')) {
          return err(`cd: ${f}: Unsupported path. Only one folder level at a time is supported.`);
        }
        if (f === '..') {
          if (this.current.parent) this.current = this.current.parent;
          else if (this.root.equals(this.current)) return err('Current directory is already the root. Cannot go back.');
          else return err('cd: ..: No such directory');
          return dict();
        }
        const target = this.navigate(f);
        if (!(target instanceof FsDirectory)) return target;
        this.current = target;
        return dict([['current_working_directory', target.name]]);
      }),
      mkdir: method(['dir_name'], ({ dir_name }) => {
        const name = dir_name!;
        if (!this.validName(name)) return err(`mkdir: cannot create directory '${pyStr(name)}': Invalid character`);
        if (this.current.contents.has(name)) return err(`mkdir: cannot create directory '${pyStr(name)}': File exists`);
        this.current.addDirectory(name);
        return null;
      }),
      touch: method(['file_name'], ({ file_name }) => {
        const name = file_name!;
        if (!this.validName(name)) return err(`touch: cannot touch '${pyStr(name)}': Invalid character`);
        if (this.current.contents.has(name)) return err(`touch: cannot touch '${pyStr(name)}': File exists`);
        this.current.addFile(name);
        return null;
      }),
      echo: method(['content', 'file_name?'], ({ content, file_name }) => {
        if (file_name === null) return dict([['terminal_output', content!]]);
        if (!this.validName(file_name!)) return err(`echo: cannot write to '${pyStr(file_name!)}': Invalid character`);
        if (!truthy(file_name!)) return dict([['terminal_output', content!]]);
        const item = this.current.contents.get(file_name!);
        if (item === undefined) return err(`echo: cannot write to '${pyStr(file_name!)}': No such file`);
        if (!(item instanceof FsFile)) throw new PyError('AttributeError', "'Directory' object has no attribute '_write'");
        item.content = content as string;
        return null;
      }),
      cat: method(['file_name'], ({ file_name }) => {
        const name = file_name!;
        if (!this.validName(name)) return err(`cat: '${pyStr(name)}': Invalid character`);
        const item = this.current.contents.get(name);
        if (item === undefined) return err(`cat: '${pyStr(name)}': No such file or directory`);
        if (item instanceof FsFile) return dict([['file_content', item.content]]);
        return err(`cat: '${pyStr(name)}': Is a directory`);
      }),
      find: method([{ name: 'path', fallback: () => '.' }, 'name?'], ({ path, name }) => {
        const target = this.navigate(path!);
        if (!(target instanceof FsDirectory)) {
          const msg = target.get('error') as string;
          return msg.startsWith('cd:') ? err(msg.replace('cd:', 'find:')) : target;
        }
        const matches: string[] = [];
        const walk = (d: FsDirectory, base: string): void => {
          for (const [itemName, item] of d.contents) {
            const itemPath = `${base}/${pyStr(itemName)}`;
            if (name === null || strContains(requireStr(itemName, '__contains__'), name!)) matches.push(itemPath);
            if (item instanceof FsDirectory) walk(item, itemPath);
          }
        };
        walk(target, rstripChars(requireStr(path!, 'rstrip'), '/'));
        return dict([['matches', matches]]);
      }),
      wc: method(['file_name', { name: 'mode', fallback: () => 'l' }], ({ file_name, mode }) => {
        if (!['l', 'w', 'c'].includes(mode as string)) return err(`wc: invalid mode '${pyStr(mode!)}'`);
        const f = this.file(file_name!);
        if (f) {
          if (mode === 'l')
            return dict([
              ['count', BigInt(splitlines(f.content).length)],
              ['type', 'lines'],
            ]);
          if (mode === 'w')
            return dict([
              ['count', BigInt(splitWhitespace(f.content).length)],
              ['type', 'words'],
            ]);
          return dict([
            ['count', BigInt(pyLen(f.content))],
            ['type', 'characters'],
          ]);
        }
        return err(`wc: ${pyStr(file_name!)}: No such file or directory`);
      }),
      sort: method(['file_name'], ({ file_name }) => {
        const f = this.file(file_name!);
        if (!f) return err(`sort: ${pyStr(file_name!)}: No such file or directory`);
        const lines = splitlines(f.content).sort((x, y) => (compare(x, y, '<') ? -1 : compare(y, x, '<') ? 1 : 0));
        return dict([['sorted_content', lines.join('\n')]]);
      }),
      grep: method(['file_name', 'pattern'], ({ file_name, pattern }) => {
        const f = this.file(file_name!);
        if (!f) return err(`grep: ${pyStr(file_name!)}: No such file or directory`);
        return dict([['matching_lines', splitlines(f.content).filter((line) => strContains(line, pattern!))]]);
      }),
      du: method([{ name: 'human_readable', fallback: () => false }], ({ human_readable }) => {
        const size = (n: Node): number =>
          n instanceof FsFile ? Buffer.byteLength(n.content, 'utf8') : [...n.contents.values()].reduce((s, c) => s + size(c), 0);
        const total = size(this.current);
        if (!truthy(human_readable!)) return dict([['disk_usage', `${total} bytes`]]);
        let value = total;
        for (const unit of ['B', 'KB', 'MB', 'GB', 'TB']) {
          if (value < 1024) return dict([['disk_usage', `${formatFixed(value, 2)} ${unit}`]]);
          value /= 1024;
        }
        return dict([['disk_usage', `${formatFixed(value, 2)} PB`]]);
      }),
      tail: method(['file_name', { name: 'lines', fallback: () => 10n }], ({ file_name, lines }) => {
        const f = this.file(file_name!);
        if (!f) return err(`tail: ${pyStr(file_name!)}: No such file or directory`);
        const all = splitlines(f.content);
        let n = lines!;
        if (compare(n, BigInt(all.length), '>')) n = BigInt(all.length);
        if (typeof n !== 'bigint' && typeof n !== 'boolean') {
          throw new PyError('TypeError', 'slice indices must be integers or None or have an __index__ method');
        }
        const start = -Number(n);
        const from = start < 0 ? Math.max(all.length + start, 0) : Math.min(start, all.length);
        return dict([['last_lines', all.slice(from).join('\n')]]);
      }),
      diff: method(['file_name1', 'file_name2'], ({ file_name1, file_name2 }) => {
        const a = this.current.contents.get(file_name1!);
        const b = this.current.contents.get(file_name2!);
        if (a instanceof FsFile && b instanceof FsFile) {
          const x = splitlines(a.content);
          const y = splitlines(b.content);
          const out: string[] = [];
          for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) out.push(`- ${x[i]}\n+ ${y[i]}`);
          return dict([['diff_lines', out.join('\n')]]);
        }
        return err(`diff: ${pyStr(file_name1!)} or ${pyStr(file_name2!)}: No such file or directory`);
      }),
      mv: method(['source', 'destination'], ({ source, destination }) => this.move(source!, destination!, 'mv')),
      cp: method(['source', 'destination'], ({ source, destination }) => this.move(source!, destination!, 'cp')),
      rm: method(['file_name'], ({ file_name }) => {
        if (!this.current.contents.has(file_name!)) return err(`rm: cannot remove '${pyStr(file_name!)}': No such file or directory`);
        this.current.contents.delete(file_name!);
        return dict([['result', `'${pyStr(file_name!)}' removed`]]);
      }),
      rmdir: method(['dir_name'], ({ dir_name }) => {
        const item = this.current.contents.get(dir_name!);
        const name = pyStr(dir_name!);
        if (item === undefined) return err(`rmdir: cannot remove '${name}': No such file or directory`);
        if (!(item instanceof FsDirectory)) return err(`rmdir: cannot remove '${name}': Not a directory`);
        if (item.contents.size > 0) return err(`rmdir: cannot remove '${name}': Directory not empty`);
        this.current.contents.delete(dir_name!);
        return dict([['result', `'${name}' removed`]]);
      }),
    };
  }

  /** mv and cp share their shape; they differ in removing the source and in how contents are carried. */
  private move(source: PyValue, destination: PyValue, verb: 'mv' | 'cp'): PyValue {
    const err = (text: string) => dict([['error', text]]);
    const [doing, done] = verb === 'mv' ? ['move', 'moved'] : ['copy', 'copied'];
    const src = pyStr(source);
    const item = this.current.contents.get(source);
    if (item === undefined) return err(`${verb}: cannot ${doing} '${src}': No such file or directory`);
    if (typeof destination !== 'string') throw new PyError('TypeError', `argument of type '${typeName(destination)}' is not iterable`);
    if (destination.includes('/')) {
      return err(`${verb}: path not allowed in destination. Provide only a file or directory name.`);
    }
    const carry = (into: FsDirectory, name: PyValue): void => {
      if (item instanceof FsFile) into.addFile(name, item.content);
      else into.addDirectory(name).contents = verb === 'mv' ? item.contents : new Map(item.contents);
    };
    const dest = this.current.contents.get(destination);
    if (dest !== undefined) {
      if (!(dest instanceof FsDirectory)) return err(`${verb}: cannot ${doing} '${src}' to '${destination}': Not a directory`);
      // BFCL's cp looks for "destination/source" among the directory's names, which never matches.
      if (verb === 'mv' && dest.contents.has(source)) return err(`mv: cannot move '${src}' to '${destination}/${src}': File exists`);
      if (verb === 'mv') this.current.contents.delete(source);
      carry(dest, source);
      return dict([['result', `'${src}' ${done} to '${destination}/${src}'`]]);
    }
    if (verb === 'mv') this.current.contents.delete(source);
    carry(this.current, destination);
    return dict([['result', `'${src}' ${done} to '${destination}'`]]);
  }
}
