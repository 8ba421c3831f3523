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

_ard()
{
    local cur prev i sub="" conn=""
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    local subs="list show hz bw delay set pub graph siggen record play export info web ros2-msgs help"
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
    --format)
        if [ "$sub" = graph ]; then
            COMPREPLY=($(compgen -W "dot svg json" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "text csv json" -- "$cur"))
        fi
        return
        ;;
    --field | --text)
        [ -n "$conn" ] && COMPREPLY=($(compgen -W "$(_ard_fields "$conn")" -- "$cur"))
        return
        ;;
    -c | --config | -o)
        COMPREPLY=($(compgen -f -- "$cur"))
        return
        ;;
    --token-file)
        COMPREPLY=($(compgen -f -- "$cur")) # ard web's token
        return
        ;;
    --dir)
        COMPREPLY=($(compgen -d -- "$cur"))
        return
        ;;
    -n | --count)
        [ "$sub" = pub ] || [ "$sub" = siggen ] && COMPREPLY=($(compgen -W "forever" -- "$cur"))
        return
        ;;
    --filter | --exclude)
        return
        ;;
    -r | --rate | -i | --interval | --seed | -t | --type | -s | --size)
        return
        ;;
    esac
    if [ -z "$sub" ]; then
        COMPREPLY=($(compgen -W "$subs --domain --help --version" -- "$cur"))
        return
    fi
    local opts=""
    case $sub in
    help) COMPREPLY=($(compgen -W "$subs" -- "$cur")) && return ;;
    list) opts="-l --long --json" ;;
    show) opts="-f --follow --field --format --json -n --count --on-change --filter --text" ;;
    hz | bw | delay) opts="--interval -n --count --json" ;;
    set) opts="--type --size" ;;
    pub) opts="--rate -n --count --type --size" ;;
    graph) opts="--format --json -o" ;;
    siggen) opts="--rate --type -n --count --seed --config" ;;
    record) opts="--exclude -o --output --compress --every --max-rate --split-size --split-duration --stats --poll-us --chunk-size --no-crc --buffer --prio -n --count --duration" ;;
    play) opts="--rate --loop --start --end --remap --connections --start-paused --clock -q --quiet" ;;
    export) opts="--csv --field --resample --onto -o --output --dir" ;;
    info) opts="--json" ;;
    web) opts="--listen --allow-set --token-file --no-token --host-name --max-clients --idle-timeout" ;;
    esac
    # ros2-msgs DIR [CONN...]: the directory first, then connections.
    [ "$sub" = ros2-msgs ] && [ -z "$conn" ] && [[ $cur != -* ]] && COMPREPLY=($(compgen -d -- "$cur")) && return
    if [[ $cur != -* ]] && { [ "$sub" = play ] || [ "$sub" = export ] || [ "$sub" = info ]; }; then
        COMPREPLY=($(compgen -f -- "$cur")) # the recording
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
    elif [ -z "$conn" ] || [ "$sub" = hz ] || [ "$sub" = bw ] || [ "$sub" = delay ] || [ "$sub" = list ] || [ "$sub" = ros2-msgs ]; then
        [ "$sub" = graph ] || COMPREPLY=($(compgen -W "$(_ard_connections)" -- "$cur"))
    elif [ "$sub" = set ] || [ "$sub" = pub ] || [ "$sub" = siggen ]; then
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -S = -W "$(_ard_fields "$conn")" -- "$cur"))
    fi
}
complete -F _ard ard
