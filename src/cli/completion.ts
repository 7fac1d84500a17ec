import type { Command, Option } from 'commander';

/**
 * Shell completion scripts, generated from commander's own command tree (commands,
 * subcommands, aliases and options), so they cannot drift from what wispctl accepts. Each
 * script holds two tables, keyed by the command path typed so far ("" for the top level,
 * "mcp env" for `wispctl mcp env ...`): the subcommand words, and the option flags (the
 * global ones are offered everywhere). Options that take a value are skipped with their
 * value while the path is read; after one, its choices are offered (-o json|wide) or the
 * shell's own file completion is left to work.
 */

interface Node {
  readonly path: string;
  readonly words: readonly string[];
  readonly options: readonly string[];
  /** Its first argument names a registered service: completed with the names `wispctl mcp list --names` prints. */
  readonly service: boolean;
}

/**
 * How every command that takes a registered service describes its first argument; the
 * completion offers the daemon's service names there. (A command naming a new service, like
 * `mcp add`, describes it otherwise and is not offered them.)
 */
export const SERVICE_ARGUMENT = 'service name (or id)';

/** Only plain words reach a script: nothing a shell would read as syntax. */
const WORD = /^-{0,2}[A-Za-z0-9][A-Za-z0-9_-]*$/;

function flagsOf(options: readonly Option[]): string[] {
  return options.flatMap((o) => [o.short, o.long]).filter((f): f is string => typeof f === 'string' && WORD.test(f));
}

/** Every command path of the tree, depth first. */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const visit = (command: Command, path: string): void => {
    // Commander's own list (hidden ones left out, its help command in).
    const visible = command.createHelp().visibleCommands(command);
    // A command's first argument with fixed choices (completion <shell>) completes like a subcommand.
    const words = [...visible.flatMap((c) => [c.name(), ...c.aliases()]), ...(command.registeredArguments[0]?.argChoices ?? [])].filter((w) => WORD.test(w));
    nodes.push({ path, words, options: [...flagsOf(command.options), '-h', '--help'], service: command.registeredArguments[0]?.description === SERVICE_ARGUMENT });
    for (const sub of visible) if (WORD.test(sub.name())) visit(sub, path === '' ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, '');
  return nodes;
}

/** Flags that take a value (skipped with it when reading the path), and the choices of those that have some. */
function valueOptions(program: Command): { takes: string[]; choices: Map<string, readonly string[]> } {
  const takes = new Set<string>();
  const choices = new Map<string, readonly string[]>();
  const visit = (command: Command): void => {
    for (const o of command.options) {
      if (!o.required && !o.optional) continue;
      for (const flag of [o.short, o.long]) {
        if (typeof flag !== 'string' || !WORD.test(flag)) continue;
        takes.add(flag);
        if (o.argChoices !== undefined) choices.set(flag, o.argChoices.filter((c) => WORD.test(c)));
      }
    }
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
  return { takes: [...takes], choices };
}

/** A `case` table in sh syntax (bash and zsh read it alike): path -> words. */
function caseTable(name: string, rows: readonly (readonly [string, readonly string[]])[]): string {
  return [`${name}() {`, '  case "$1" in', ...rows.filter(([, words]) => words.length > 0).map(([key, words]) => `    "${key}") echo "${words.join(' ')}" ;;`), '  esac', '}'].join('\n');
}

function tables(program: Command, prefix: string): string {
  const nodes = commandTree(program);
  const { takes, choices } = valueOptions(program);
  return [
    caseTable(`${prefix}_words`, nodes.map((n) => [n.path, n.words])),
    caseTable(`${prefix}_opts`, nodes.map((n) => [n.path, n.options])),
    caseTable(`${prefix}_choices`, [...choices].map(([flag, values]) => [flag, values])),
    caseTable(`${prefix}_service`, nodes.filter((n) => n.service).map((n) => [n.path, ['yes']])),
    `${prefix}_takes_value() {\n  case "$1" in\n    ${takes.join('|')}) return 0 ;;\n  esac\n  return 1\n}`,
  ].join('\n\n');
}

/**
 * A service name as the daemon allows it (core's SERVICE_NAME_PATTERN, written out: importing
 * core here splits the bundle's chunks so that `wispctl status` loads two files more;
 * test/integration/completion.test.ts holds the two equal). Only such lines of
 * `mcp list --names` become words.
 */
const SERVICE_LINE = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/**
 * bash and zsh: the registered service names, asked of the daemon as the line typed so far
 * names it (its --socket and --data-dir), at the moment of completion; nothing when no daemon
 * answers. Lines that are not service names are dropped, so nothing else reaches compgen -W
 * (which expands its words) or compadd.
 */
const SERVICES_FN = `_wispctl_services() {
  local name
  "$@" mcp list --names 2>/dev/null | while IFS= read -r name; do
    [[ $name =~ ${SERVICE_LINE} ]] && printf '%s\\n' "$name"
  done
}`;

export function bashScript(program: Command): string {
  return `# wispctl completion for bash: eval "$(wispctl completion bash)", e.g. in ~/.bashrc
${tables(program, '_wispctl')}

${SERVICES_FN}

_wispctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmdpath="" w i npos=0 conn=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in --socket|--data-dir) conn+=("$w" "\${COMP_WORDS[i+1]}") ;; --socket=*|--data-dir=*) conn+=("$w") ;; esac
    if _wispctl_takes_value "$w"; then i=$((i + 1)); continue; fi
    case "$w" in -*) continue ;; esac
    case " $(_wispctl_words "$cmdpath") " in *" $w "*) cmdpath="\${cmdpath:+$cmdpath }$w" ;; *) npos=$((npos + 1)) ;; esac
  done
  if [[ $COMP_CWORD -gt 1 ]] && _wispctl_takes_value "$prev"; then
    COMPREPLY=($(compgen -W "$(_wispctl_choices "$prev")" -- "$cur"))
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_wispctl_opts "$cmdpath") $(_wispctl_opts "")" -- "$cur"))
  else
    local cands="$(_wispctl_words "$cmdpath")"
    if [[ $npos -eq 0 && -n $(_wispctl_service "$cmdpath") ]]; then cands="$cands $(_wispctl_services "\${COMP_WORDS[0]}" "\${conn[@]}")"; fi
    COMPREPLY=($(compgen -W "$cands" -- "$cur"))
  fi
}
complete -o default -F _wispctl wispctl
`;
}

export function zshScript(program: Command): string {
  return `#compdef wispctl
# wispctl completion for zsh: wispctl completion zsh > "\${fpath[1]}/_wispctl", or eval "$(wispctl completion zsh)" after compinit
${tables(program, '_wispctl')}

${SERVICES_FN}

_wispctl() {
  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" cmdpath="" w i npos=0
  local -a conn
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    case "$w" in --socket|--data-dir) conn+=("$w" "\${words[i+1]}") ;; --socket=*|--data-dir=*) conn+=("$w") ;; esac
    if _wispctl_takes_value "$w"; then i=$((i + 1)); continue; fi
    case "$w" in -*) continue ;; esac
    case " $(_wispctl_words "$cmdpath") " in *" $w "*) cmdpath="\${cmdpath:+$cmdpath }$w" ;; *) npos=$((npos + 1)) ;; esac
  done
  if (( CURRENT > 2 )) && _wispctl_takes_value "$prev"; then
    local choices="$(_wispctl_choices "$prev")"
    if [[ -n $choices ]]; then compadd -- \${=choices}; else _files; fi
    return
  fi
  if [[ $cur == -* ]]; then
    compadd -- \${=$(_wispctl_opts "$cmdpath")} \${=$(_wispctl_opts "")}
  else
    local cands="$(_wispctl_words "$cmdpath")"
    if (( npos == 0 )) && [[ -n $(_wispctl_service "$cmdpath") ]]; then cands="$cands $(_wispctl_services "\${words[1]}" "\${conn[@]}")"; fi
    compadd -- \${=cands}
  fi
}
compdef _wispctl wispctl
`;
}

/** fish: the same tables as fish functions (fish has no case fallthrough syntax of sh). */
function fishTable(name: string, rows: readonly (readonly [string, readonly string[]])[]): string {
  return [`function ${name}`, '    switch "$argv[1]"', ...rows.filter(([, words]) => words.length > 0).map(([key, words]) => `        case '${key}'\n            echo ${words.join(' ')}`), '    end', 'end'].join('\n');
}

export function fishScript(program: Command): string {
  const nodes = commandTree(program);
  const { takes, choices } = valueOptions(program);
  return `# wispctl completion for fish: wispctl completion fish > ~/.config/fish/completions/wispctl.fish
${fishTable('__wispctl_words', nodes.map((n) => [n.path, n.words]))}
${fishTable('__wispctl_opts', nodes.map((n) => [n.path, n.options]))}
${fishTable('__wispctl_choices', [...choices].map(([flag, values]) => [flag, values]))}
${fishTable('__wispctl_service', nodes.filter((n) => n.service).map((n) => [n.path, ['yes']]))}

function __wispctl_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmdpath ''
    set -l skip 0
    set -l npos 0
    set -l conn
    set -l flag ''
    for w in $tokens[2..-1]
        if test $skip = 1; set skip 0; if contains -- $flag --socket --data-dir; set conn $conn $flag $w; end; continue; end
        if contains -- $w ${takes.join(' ')}; set skip 1; set flag $w; continue; end
        if string match -q -- '--socket=*' $w; or string match -q -- '--data-dir=*' $w; set conn $conn $w; continue; end
        if string match -q -- '-*' $w; continue; end
        if contains -- $w (string split ' ' (__wispctl_words "$cmdpath")); set cmdpath (string trim "$cmdpath $w"); else; set npos (math $npos + 1); end
    end
    if test $skip = 1
        string split ' ' (__wispctl_choices $tokens[-1])
    else if string match -q -- '-*' $cur
        string split ' ' (__wispctl_opts "$cmdpath") (__wispctl_opts '')
    else
        string split ' ' (__wispctl_words "$cmdpath")
        set -l service (__wispctl_service "$cmdpath")
        if test $npos = 0 -a -n "$service"
            $tokens[1] $conn mcp list --names 2>/dev/null | string match -r -- '${SERVICE_LINE}'
        end
    end
end
complete -c wispctl -f -a '(__wispctl_complete)'
`;
}
