/** TwitterAPI: one account's tweets, comments, retweets and follows. */
import { pyStr } from '../py/format.ts';
import { add, toPyInt } from '../py/num.ts';
import { dget, dhas, dict, dset, type PyDict, PyError, iterate, type PyValue, pyEquals, truthy, typeName } from '../py/value.ts';
import { type ApiContext, type BfclApi, configGet, method, type Method, requireStr, strContains } from './api.ts';
import type { SharedState } from './shared.ts';

export class TwitterAPI implements BfclApi {
  readonly className = 'TwitterAPI';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly username: PyValue;
  private readonly password: PyValue;
  private authenticated: PyValue;
  private readonly tweets: PyDict;
  private readonly comments: PyDict;
  private readonly retweets: PyDict;
  private readonly followingList: PyValue[];
  private tweetCounter: PyValue;

  constructor(ctx: ApiContext) {
    const c = ctx.config;
    this.username = configGet(c, 'username', 'john');
    this.password = configGet(c, 'password', 'john123');
    this.authenticated = configGet(c, 'authenticated', false);
    const tweets = configGet(c, 'tweets', new Map()) as PyDict;
    // BFCL converts the loaded tweet keys from str to int.
    this.tweets = new Map([...tweets].map(([k, v]) => [toPyInt(k), v]));
    this.comments = configGet(c, 'comments', new Map()) as PyDict;
    this.retweets = configGet(c, 'retweets', new Map()) as PyDict;
    this.followingList = configGet(c, 'following_list', ['alice', 'bob']) as PyValue[];
    this.tweetCounter = configGet(c, 'tweet_counter', 0n);
    this.methods = new Map(Object.entries(this.table(ctx.shared)));
  }

  state(): [string, PyValue][] {
    return [
      ['username', this.username],
      ['password', this.password],
      ['authenticated', this.authenticated],
      ['tweets', this.tweets],
      ['comments', this.comments],
      ['retweets', this.retweets],
      ['following_list', this.followingList],
      ['tweet_counter', this.tweetCounter],
    ];
  }

  private table(shared: SharedState): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    const needAuth = (what: string) => err(`User not authenticated. Please authenticate before ${what}.`);
    const notFound = (id: PyValue) => err(`Tweet with ID ${pyStr(id)} not found.`);
    const tweetsBy = (username: PyValue) => [...this.tweets.values()].filter((t) => pyEquals((t as PyDict).get('username') as PyValue, username));
    return {
      authenticate_twitter: method(['username', 'password'], ({ username, password }) => {
        if (pyEquals(username!, this.username) && pyEquals(password!, this.password)) {
          this.authenticated = true;
          return dict([['authentication_status', true]]);
        }
        return dict([['authentication_status', false]]);
      }),
      posting_get_login_status: method([], () => dict([['login_status', truthy(this.authenticated)]])),
      // Python's `tags=[]` / `mentions=[]` defaults are single lists shared by every call that omits them.
      post_tweet: method(
        ['content', { name: 'tags', fallback: () => shared.tweetDefaultTags }, { name: 'mentions', fallback: () => shared.tweetDefaultMentions }],
        ({ content, tags, mentions }) => {
          if (!truthy(this.authenticated)) return needAuth('posting');
          const tweet = dict([
            ['id', this.tweetCounter],
            ['username', this.username],
            ['content', content!],
            ['tags', tags!],
            ['mentions', mentions!],
          ]);
          dset(this.tweets, this.tweetCounter, tweet);
          this.tweetCounter = add(this.tweetCounter, 1n);
          return tweet;
        },
      ),
      retweet: method(['tweet_id'], ({ tweet_id }) => {
        if (!truthy(this.authenticated)) return needAuth('retweeting');
        if (!dhas(this.tweets, tweet_id!)) return notFound(tweet_id!);
        if (!dhas(this.retweets, this.username)) dset(this.retweets, this.username, []);
        const mine = dget(this.retweets, this.username) as PyValue[];
        if (mine.some((x) => pyEquals(x, tweet_id!))) return dict([['retweet_status', 'Already retweeted']]);
        mine.push(tweet_id!);
        return dict([['retweet_status', 'Successfully retweeted']]);
      }),
      comment: method(['tweet_id', 'comment_content'], ({ tweet_id, comment_content }) => {
        if (!truthy(this.authenticated)) return needAuth('commenting');
        if (!dhas(this.tweets, tweet_id!)) return notFound(tweet_id!);
        if (!dhas(this.comments, tweet_id!)) dset(this.comments, tweet_id!, []);
        (dget(this.comments, tweet_id!) as PyValue[]).push(
          dict([
            ['username', this.username],
            ['content', comment_content!],
          ]),
        );
        return dict([['comment_status', 'Comment added successfully']]);
      }),
      mention: method(['tweet_id', 'mentioned_usernames'], ({ tweet_id, mentioned_usernames }) => {
        if (!dhas(this.tweets, tweet_id!)) return notFound(tweet_id!);
        const tweet = dget(this.tweets, tweet_id!) as PyDict;
        const list = tweet.get('mentions') as PyValue;
        if (!Array.isArray(list)) throw new PyError('AttributeError', `'${typeName(list)}' object has no attribute 'extend'`);
        list.push(...iterate(mentioned_usernames!));
        return dict([['mention_status', 'Users mentioned successfully']]);
      }),
      follow_user: method(['username_to_follow'], ({ username_to_follow }) => {
        if (!truthy(this.authenticated)) return needAuth('following');
        if (this.followingList.some((x) => pyEquals(x, username_to_follow!))) return dict([['follow_status', false]]);
        this.followingList.push(username_to_follow!);
        return dict([['follow_status', true]]);
      }),
      list_all_following: method([], () => {
        if (!truthy(this.authenticated)) return needAuth('listing following');
        return dict([['following_list', this.followingList]]);
      }),
      unfollow_user: method(['username_to_unfollow'], ({ username_to_unfollow }) => {
        if (!truthy(this.authenticated)) return needAuth('unfollowing');
        const i = this.followingList.findIndex((x) => pyEquals(x, username_to_unfollow!));
        if (i < 0) return dict([['unfollow_status', false]]);
        this.followingList.splice(i, 1);
        return dict([['unfollow_status', true]]);
      }),
      get_tweet: method(['tweet_id'], ({ tweet_id }) => (dhas(this.tweets, tweet_id!) ? (dget(this.tweets, tweet_id!) as PyValue) : notFound(tweet_id!))),
      get_user_tweets: method(['username'], ({ username }) => tweetsBy(username!)),
      search_tweets: method(['keyword'], ({ keyword }) => {
        const k = requireStr(keyword!, 'lower').toLowerCase();
        return [...this.tweets.values()].filter((t) => {
          const tweet = t as PyDict;
          if (strContains(requireStr(tweet.get('content') as PyValue, 'lower').toLowerCase(), k)) return true;
          return iterate(tweet.get('tags') as PyValue).some((tag) => requireStr(tag, 'lower').toLowerCase() === k);
        });
      }),
      get_tweet_comments: method(['tweet_id'], ({ tweet_id }) => {
        if (!dhas(this.tweets, tweet_id!)) return notFound(tweet_id!);
        return dhas(this.comments, tweet_id!) ? (dget(this.comments, tweet_id!) as PyValue) : [];
      }),
      get_user_stats: method(['username'], ({ username }) => {
        const following = pyEquals(username!, this.username) ? this.followingList.length : 0;
        const retweets = dhas(this.retweets, username!) ? iterate(dget(this.retweets, username!) as PyValue).length : 0;
        return dict([
          ['tweet_count', BigInt(tweetsBy(username!).length)],
          ['following_count', BigInt(following)],
          ['retweet_count', BigInt(retweets)],
        ]);
      }),
    };
  }
}
