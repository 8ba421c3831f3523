# bash completion for ard (installed as bash-completion/completions/ard)

_ard_domain()
{
    local i
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        case ${COMP_WORDS[i]} in
        -d | --domain) echo "${COMP_WORDS[i + 1]}" && return ;;
        --domain=*) echo "${COMP_WORDS[i]#--domain=}" && return ;;
        esac
    done
    echo "${ARD_DOMAIN:-default}"
}

_ard_connections()
{
    local d f
    d=$(_ard_domain)
    for f in /dev/shm/ard."$d".*; do
        [ -e "$f" ] && echo "${f#/dev/shm/ard."$d".}"
    done
}

# Field names of a connection, from its descriptor (unnamed fields are fN).
_ard_fields()
{
    ard --domain "$(_ard_domain)" list --json "$1" 2>/dev/null |
        sed -n 's/.*"type":"\([^"]*\)".*/\1/p' | tr ' ' '\n' |
        awk '{ n = index($0, ":"); if (n) print substr($0, 1, n - 1); else print "f" NR - 1 }'
}

# The options of subcommand $1 (ard's own when $1 is empty), a line each: NAME<TAB>VALUE,
# VALUE empty for a flag, else what completes it (@file, @dir, @field, words) or "-" for
# nothing. From ard's own option tables (ard help --options [SUB]), so that the completion
# offers what the parser takes.
_ard_options()
{
    ard help --options ${1:+"$1"} 2>/dev/null
}

_ard()
{
    local cur prev i sub="" conn=""
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    local subs="list df show hz bw delay set pub graph siggen record play export info web ros2-msgs help"
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -d | --domain) ((i++)) ;;
        -*) ;;
        *)
            if [ -z "$sub" ]; then
                sub=${COMP_WORDS[i]}
            elif [ -z "$conn" ]; then
                conn=${COMP_WORDS[i]}
            fi
            ;;
        esac
    done
    case $prev in
    -d | --domain)
        COMPREPLY=($(compgen -W "$(ls /dev/shm 2>/dev/null | sed -n 's/^ard\.\([^.]*\)\..*/\1/p' | sort -u)" -- "$cur"))
        return
        ;;
    esac
    if [ -z "$sub" ]; then
        COMPREPLY=($(compgen -W "$subs $(_ard_options "" | cut -f1)" -- "$cur"))
        return
    fi
    [ "$sub" = help ] && COMPREPLY=($(compgen -W "$subs" -- "$cur")) && return
    local options value
    options=$(_ard_options "$sub")
    # The value of the option before the cursor.
    if [[ $prev == -* ]] && value=$(awk -F '\t' -v o="$prev" '$1 == o { print $2; f = 1 } END { exit !f }' <<<"$options") && [ -n "$value" ]; then
        case $value in
        @file) COMPREPLY=($(compgen -f -- "$cur")) ;;
        @dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
        @field) [ -n "$conn" ] && COMPREPLY=($(compgen -W "$(_ard_fields "$conn")" -- "$cur")) ;;
        -) ;;
        *) COMPREPLY=($(compgen -W "$value" -- "$cur")) ;;
        esac
        return
    fi
    # ros2-msgs DIR [CONN...]: the directory first, then connections.
    [ "$sub" = ros2-msgs ] && [ -z "$conn" ] && [[ $cur != -* ]] && COMPREPLY=($(compgen -d -- "$cur")) && return
    if [[ $cur != -* ]] && { [ "$sub" = play ] || [ "$sub" = export ] || [ "$sub" = info ]; }; then
        COMPREPLY=($(compgen -f -- "$cur")) # the recording
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(cut -f1 <<<"$options") --help" -- "$cur"))
    elif [ -z "$conn" ] || [ "$sub" = hz ] || [ "$sub" = bw ] || [ "$sub" = delay ] || [ "$sub" = list ] || [ "$sub" = ros2-msgs ]; then
        [ "$sub" = graph ] || COMPREPLY=($(compgen -W "$(_ard_connections)" -- "$cur"))
    elif [ "$sub" = set ] || [ "$sub" = pub ] || [ "$sub" = siggen ]; then
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -S = -W "$(_ard_fields "$conn")" -- "$cur"))
    fi
}
complete -F _ard ard
